import { createSocket, type Socket } from 'node:dgram';
import { parseMessage, type SipRequest, type SipResponse } from '../../src/sip/message/index.js';

/** A bare UDP peer for tests: sends text, collects every message that comes back. */
export class RawUdpPeer {
  readonly received: (SipRequest | SipResponse)[] = [];
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly socket: Socket,
    readonly port: number,
  ) {
    socket.on('message', (data) => {
      this.received.push(parseMessage(data));
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  static async open(): Promise<RawUdpPeer> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
    return new RawUdpPeer(socket, socket.address().port);
  }

  send(text: string, port: number): void {
    this.socket.send(Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'latin1'), port, '127.0.0.1');
  }

  /** Waits until `count` messages (in all) have arrived. */
  async waitFor(count: number, timeoutMs = 3000): Promise<(SipRequest | SipResponse)[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} messages, got ${this.received.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.received;
  }

  close(): void {
    this.socket.close();
  }
}
