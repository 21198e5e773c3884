import { connect, createServer, type Server, type Socket } from 'node:net';
import { SipStreamFramer } from '../message/index.js';
import { flowKey, type Address, type Flow } from './flow.js';
import type { TransportListener } from './udp-transport.js';

interface Connection {
  id: string;
  socket: Socket;
  flow: Flow;
  idle: NodeJS.Timeout | null;
}

export interface TcpTransportOptions {
  /** Closes a connection after this long without traffic (default 5 minutes). */
  idleMs?: number;
  /** The largest message accepted on a connection (the framer's default unless given). */
  maxMessageSize?: number;
}

/** SIP over TCP: a listening server and outbound connections, reused per remote address. */
export class TcpTransport {
  private readonly connections = new Map<string, Connection>();
  private readonly byRemote = new Map<string, string>();
  private sequence = 0;
  private readonly idleMs: number;

  private constructor(
    private readonly server: Server,
    readonly local: Address,
    private readonly listener: TransportListener,
    private readonly options: TcpTransportOptions,
  ) {
    this.idleMs = options.idleMs ?? 5 * 60_000;
  }

  static listen(
    host: string,
    port: number,
    listener: TransportListener,
    options: TcpTransportOptions = {},
  ): Promise<TcpTransport> {
    const server = createServer();
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        const bound = server.address() as { address: string; port: number };
        const transport = new TcpTransport(
          server,
          { address: bound.address, port: bound.port },
          listener,
          options,
        );
        server.on('connection', (socket) => transport.adopt(socket));
        resolve(transport);
      });
    });
  }

  get openConnections(): number {
    return this.connections.size;
  }

  /** Sends on an existing connection, or on the one to that address (opened if needed). */
  async send(data: Buffer, to: { connectionId: string } | Address): Promise<void> {
    let connection =
      'connectionId' in to ? this.connections.get(to.connectionId) : this.toRemote(to);
    if (!connection) {
      if ('connectionId' in to) throw new Error(`connection ${to.connectionId} is closed`);
      connection = await this.open(to);
    }
    connection.socket.write(data);
    this.touch(connection);
  }

  close(): Promise<void> {
    for (const c of this.connections.values()) c.socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private toRemote(remote: Address): Connection | undefined {
    const id = this.byRemote.get(flowKey('TCP', remote));
    return id ? this.connections.get(id) : undefined;
  }

  private open(remote: Address): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: remote.address, port: remote.port });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(this.adopt(socket));
      });
    });
  }

  private adopt(socket: Socket): Connection {
    const id = `tcp-${++this.sequence}`;
    const remote = { address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 };
    const flow: Flow = { protocol: 'TCP', local: this.local, remote, connectionId: id };
    const connection: Connection = { id, socket, flow, idle: null };
    this.connections.set(id, connection);
    this.byRemote.set(flowKey('TCP', remote), id);
    const framer = new SipStreamFramer({ maxSize: this.options.maxMessageSize });
    socket.on('data', (chunk) => {
      this.touch(connection);
      for (const item of framer.push(chunk)) {
        if (item.kind === 'message') this.listener.onMessage(item.data, flow);
        // RFC 5626 3.5.1: a double-CRLF ping is answered with a single CRLF pong.
        else if (item.kind === 'ping') socket.write('\r\n');
        else if (item.kind === 'error') {
          // A stream that cannot be framed cannot be resynchronised: close it.
          this.listener.onError?.(new Error(`${flowKey('TCP', remote)}: ${item.error.reason}`));
          socket.destroy();
        }
      }
    });
    socket.on('error', (error) => this.listener.onError?.(error));
    socket.on('close', () => this.forget(connection));
    this.touch(connection);
    return connection;
  }

  private touch(connection: Connection): void {
    if (connection.idle) clearTimeout(connection.idle);
    connection.idle = setTimeout(() => connection.socket.destroy(), this.idleMs);
    connection.idle.unref();
  }

  private forget(connection: Connection): void {
    if (connection.idle) clearTimeout(connection.idle);
    this.connections.delete(connection.id);
    const key = flowKey('TCP', connection.flow.remote);
    if (this.byRemote.get(key) === connection.id) this.byRemote.delete(key);
  }
}
