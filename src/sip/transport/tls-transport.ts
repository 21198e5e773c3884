import type { Server, Socket } from 'node:net';
import { connect, createServer } from 'node:tls';
import type { ConnectionListener } from './connection-listener.js';
import type { Address } from './flow.js';
import { listenServer } from './listen-server.js';
import { StreamTransport, type StreamTransportOptions } from './stream-transport.js';
import { checkCredentials, type TlsCredentials } from './tls-credentials.js';

export interface TlsTransportOptions extends StreamTransportOptions, TlsCredentials {
  /**
   * Certificates trusted for outbound connections, PEM (the system's root store unless given).
   * The peer's certificate must also name the address dialled.
   */
  ca?: string | Buffer | (string | Buffer)[];
}

/**
 * SIP over TLS (RFC 3261 26.2.1, RFC 5630): the TCP transport's framing, keep-alives and
 * connection reuse over TLS connections, accepted with the given certificate and dialled with
 * the peer's certificate verified.
 */
export class TlsTransport extends StreamTransport {
  private readonly trusted: TlsTransportOptions['ca'];

  private constructor(
    server: Server,
    local: Address,
    listener: ConnectionListener,
    options: TlsTransportOptions,
  ) {
    super('TLS', server, 'secureConnection', local, listener, options);
    this.trusted = options.ca;
    // A handshake that fails never becomes a connection: only report it.
    server.on('tlsClientError', (error: Error, socket: Socket) => this.reportFailed(socket, error));
  }

  static async listen(
    host: string,
    port: number,
    listener: ConnectionListener,
    options: TlsTransportOptions,
  ): Promise<TlsTransport> {
    checkCredentials(options);
    const server = createServer({ cert: options.cert, key: options.key });
    const local = await listenServer(server, host, port);
    return new TlsTransport(server, local, listener, options);
  }

  protected override dial(remote: Address): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: remote.address, port: remote.port, ca: this.trusted });
      socket.once('error', reject);
      socket.once('secureConnect', () => {
        socket.off('error', reject);
        resolve(socket);
      });
    });
  }
}
