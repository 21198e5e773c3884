import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { Address, Flow } from './flow.js';

export interface TransportListener {
  onMessage(data: Buffer, flow: Flow): void;
  onError?(error: Error): void;
}

/** The largest UDP payload; RFC 3261 18.1.1's MTU rule is the sender's business, above this. */
const MAX_DATAGRAM = 65_507;

/** SIP over UDP: one socket, datagrams in and out. */
export class UdpTransport {
  private constructor(
    private readonly socket: Socket,
    readonly local: Address,
  ) {}

  static listen(host: string, port: number, listener: TransportListener): Promise<UdpTransport> {
    const socket = createSocket({ type: isIPv6(host) ? 'udp6' : 'udp4', reuseAddr: false });
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, host, () => {
        socket.off('error', reject);
        const bound = socket.address();
        const local = { address: bound.address, port: bound.port };
        socket.on('error', (error) => listener.onError?.(error));
        socket.on('message', (data, remote) => {
          // RFC 5626 4.4.1: a CRLF keepalive on UDP carries no message; nothing to answer.
          if (isBlank(data)) return;
          listener.onMessage(data, {
            protocol: 'UDP',
            local,
            remote: { address: remote.address, port: remote.port },
          });
        });
        resolve(new UdpTransport(socket, local));
      });
    });
  }

  send(data: Buffer, to: Address): void {
    if (data.length > MAX_DATAGRAM)
      throw new Error(`message of ${data.length} bytes is too large for UDP`);
    this.socket.send(data, to.port, to.address);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

function isBlank(data: Buffer): boolean {
  for (const byte of data) if (byte !== 0x0d && byte !== 0x0a && byte !== 0x20) return false;
  return true;
}
