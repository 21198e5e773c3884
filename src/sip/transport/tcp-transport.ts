import { connect, createServer, type Server, type Socket } from 'node:net';
import type { ConnectionListener } from './connection-listener.js';
import type { Address } from './flow.js';
import { listenServer } from './listen-server.js';
import { StreamTransport, type StreamTransportOptions } from './stream-transport.js';

export type TcpTransportOptions = StreamTransportOptions;

/** SIP over TCP: a listening server and outbound connections, reused per remote address. */
export class TcpTransport extends StreamTransport {
  private constructor(
    server: Server,
    local: Address,
    listener: ConnectionListener,
    options: TcpTransportOptions,
  ) {
    super('TCP', server, 'connection', local, listener, options);
  }

  static async listen(
    host: string,
    port: number,
    listener: ConnectionListener,
    options: TcpTransportOptions = {},
  ): Promise<TcpTransport> {
    const server = createServer();
    const local = await listenServer(server, host, port);
    return new TcpTransport(server, local, listener, options);
  }

  protected override dial(remote: Address): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: remote.address, port: remote.port });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(socket);
      });
    });
  }
}
