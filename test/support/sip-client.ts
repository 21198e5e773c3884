import { createSocket, type Socket } from 'node:dgram';
import { parseMessage, type SipRequest, type SipResponse } from '../../src/sip/message/index.js';

/** A bare UDP peer for tests: sends text, collects every message that comes back. */
export class RawUdpPeer {
  readonly received: (SipRequest | SipResponse)[] = [];
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly socket: Socket,
    readonly port: number,
    /** The loopback address it sends from (127.0.0.1, or another of 127/8). */
    readonly host: string,
  ) {
    socket.on('message', (data) => {
      this.received.push(parseMessage(data));
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  static async open(host = '127.0.0.1'): Promise<RawUdpPeer> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, host, () => resolve()));
    return new RawUdpPeer(socket, socket.address().port, host);
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

  /**
   * Sends an INVITE for `user` at the gateway's UDP `port`, offering PCMU (RTP port 4000), from
   * `from` (a user at 127.0.0.1); `callId` also makes its branch and tag.
   */
  sendInvite(invite: { user: string; port: number; from: string; callId: string }): void {
    const offer =
      'v=0\r\no=a 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n';
    this.send(
      [
        `INVITE sip:${invite.user}@127.0.0.1:${invite.port} SIP/2.0`,
        `Via: SIP/2.0/UDP ${this.host}:${this.port};branch=z9hG4bK${invite.callId};rport`,
        'Max-Forwards: 70',
        `From: <sip:${invite.from}@${this.host}>;tag=${invite.callId}`,
        `To: <sip:${invite.user}@127.0.0.1>`,
        `Call-ID: ${invite.callId}`,
        'CSeq: 1 INVITE',
        `Contact: <sip:caller@${this.host}:${this.port}>`,
        'Content-Type: application/sdp',
        `Content-Length: ${Buffer.byteLength(offer)}`,
        '',
        offer,
      ].join('\n'),
      invite.port,
    );
  }

  /** The first final response received (a status of 200 or more), if one has come. */
  finalResponse(): SipResponse | undefined {
    return this.received.find((m): m is SipResponse => 'status' in m && m.status >= 200);
  }

  close(): void {
    this.socket.close();
  }
}
