import type { Server, Socket } from 'node:net';
import { SipStreamFramer } from '../message/index.js';
import type { ConnectionListener } from './connection-listener.js';
import { connectionIdPrefix, flowKey, type Address, type Flow } from './flow.js';
import { handshakeError } from './handshake-error.js';

/** The stream-oriented transports of RFC 3261 18.3. */
export type StreamProtocol = 'TCP' | 'TLS';

interface Connection {
  id: string;
  socket: Socket;
  flow: Flow;
  idle: NodeJS.Timeout | null;
}

export interface StreamTransportOptions {
  /** Closes a connection after this long without traffic (default 5 minutes). */
  idleMs?: number;
  /** The largest message accepted on a connection (the framer's default unless given). */
  maxMessageSize?: number;
}

/**
 * SIP over a byte stream (TCP, or TLS over TCP): accepted and outbound connections, reused per
 * remote address, each cut into messages by Content-Length with CRLF keep-alives answered.
 * Subclasses bring the listening server and the way to open a connection.
 */
export abstract class StreamTransport {
  private readonly connections = new Map<string, Connection>();
  private readonly byRemote = new Map<string, string>();
  private sequence = 0;
  /**
   * Starts every connection id: the protocol and a random part of this transport's own. A
   * registration stores the id of the connection it came on, and every node of a cluster
   * reads it: with a bare counter, `ws-3` on one node would name another client's connection
   * on the next.
   */
  private readonly idPrefix: string;
  private readonly idleMs: number;

  /**
   * `connectionEvent` is the server event that hands over a socket ready for SIP: `connection`
   * for TCP, `secureConnection` (after the handshake) for TLS.
   */
  protected constructor(
    readonly protocol: StreamProtocol,
    private readonly server: Server,
    connectionEvent: 'connection' | 'secureConnection',
    readonly local: Address,
    private readonly listener: ConnectionListener,
    private readonly options: StreamTransportOptions,
  ) {
    this.idPrefix = connectionIdPrefix(protocol);
    this.idleMs = options.idleMs ?? 5 * 60_000;
    server.on(connectionEvent, (socket: Socket) => this.adopt(socket));
  }

  /** Opens a connection to a peer; resolves once it can carry SIP. */
  protected abstract dial(remote: Address): Promise<Socket>;

  get openConnections(): number {
    return this.connections.size;
  }

  /** Sends on an existing connection, or on the one to that address (opened if needed). */
  async send(data: Buffer, to: { connectionId: string } | Address): Promise<void> {
    let connection =
      'connectionId' in to ? this.connections.get(to.connectionId) : this.toRemote(to);
    if (!connection) {
      if ('connectionId' in to) throw new Error(`connection ${to.connectionId} is closed`);
      connection = this.adopt(await this.dial(to));
    }
    connection.socket.write(data);
    this.touch(connection);
  }

  close(): Promise<void> {
    for (const c of this.connections.values()) c.socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Takes a connected socket (accepted or dialled) into the transport. */
  private adopt(socket: Socket): Connection {
    const id = `${this.idPrefix}-${++this.sequence}`;
    const remote = { address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 };
    const flow: Flow = { protocol: this.protocol, local: this.local, remote, connectionId: id };
    const connection: Connection = { id, socket, flow, idle: null };
    this.connections.set(id, connection);
    this.byRemote.set(flowKey(this.protocol, remote), id);
    const framer = new SipStreamFramer({ maxSize: this.options.maxMessageSize });
    socket.on('data', (chunk: Buffer) => {
      this.touch(connection);
      for (const item of framer.push(chunk)) {
        if (item.kind === 'message') this.listener.onMessage(item.data, flow);
        // RFC 5626 3.5.1: a double-CRLF ping is answered with a single CRLF pong.
        else if (item.kind === 'ping') socket.write('\r\n');
        else if (item.kind === 'error') {
          // A stream that cannot be framed cannot be resynchronised: close it.
          const where = flowKey(this.protocol, remote);
          this.listener.onError?.(new Error(`${where}: ${item.error.reason}`));
          socket.destroy();
        }
      }
    });
    socket.on('error', (error) => this.listener.onError?.(error));
    socket.on('close', () => this.forget(connection));
    this.touch(connection);
    return connection;
  }

  /** Reports a connection that failed before it could carry SIP (a TLS handshake, say). */
  protected reportFailed(socket: Socket, error: Error): void {
    this.listener.onError?.(handshakeError(this.protocol, socket, error));
  }

  private toRemote(remote: Address): Connection | undefined {
    const id = this.byRemote.get(flowKey(this.protocol, remote));
    return id ? this.connections.get(id) : undefined;
  }

  private touch(connection: Connection): void {
    if (connection.idle) clearTimeout(connection.idle);
    connection.idle = setTimeout(() => connection.socket.destroy(), this.idleMs);
    connection.idle.unref();
  }

  private forget(connection: Connection): void {
    if (connection.idle) clearTimeout(connection.idle);
    this.connections.delete(connection.id);
    const key = flowKey(this.protocol, connection.flow.remote);
    if (this.byRemote.get(key) === connection.id) this.byRemote.delete(key);
    this.listener.onClose?.(connection.flow);
  }
}
