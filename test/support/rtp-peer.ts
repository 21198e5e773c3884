import { createSocket, type Socket } from 'node:dgram';
import { encodeTelephoneEvent } from '../../src/media/dtmf/index.js';
import {
  parseRtpPacket,
  serializeRtpPacket,
  type RtpPacket,
} from '../../src/media/rtp/rtp-packet.js';

export interface ReceivedRtp extends RtpPacket {
  /** When it arrived, ms since the peer opened. */
  at: number;
  from: { address: string; port: number };
}

/**
 * A plain UDP endpoint playing the far side of a call's RTP: it sends packets it is told to
 * (paced or all at once) and keeps every packet that reaches it, parsed.
 */
export class RtpPeer {
  readonly received: ReceivedRtp[] = [];
  private sequence = 1000;
  private timestamp = 50_000;
  private closed: Promise<void> | undefined;
  /** Epoch ms it opened at: `at` of a received packet counts from it. */
  readonly opened = Date.now();

  private constructor(
    private readonly socket: Socket,
    readonly port: number,
    readonly ssrc: number,
  ) {
    socket.on('message', (data, from) => {
      try {
        this.received.push({
          ...parseRtpPacket(data),
          at: Date.now() - this.opened,
          from: { address: from.address, port: from.port },
        });
      } catch {
        // Not RTP: ignored, as a phone would.
      }
    });
  }

  static async open(ssrc = 0x1234abcd): Promise<RtpPeer> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new RtpPeer(socket, socket.address().port, ssrc);
  }

  get address(): { address: string; port: number } {
    return { address: '127.0.0.1', port: this.port };
  }

  /** Sends one packet to `port` on loopback; sequence and timestamp run on by themselves. */
  send(
    port: number,
    payload: Uint8Array,
    options: { payloadType: number; samples?: number; marker?: boolean; timestamp?: number },
  ): void {
    const data = serializeRtpPacket({
      marker: options.marker ?? false,
      payloadType: options.payloadType,
      sequenceNumber: this.sequence,
      timestamp: options.timestamp ?? this.timestamp,
      ssrc: this.ssrc,
      payload,
    });
    this.sequence = (this.sequence + 1) & 0xffff;
    this.timestamp = (this.timestamp + (options.samples ?? 160)) >>> 0;
    this.socket.send(data, port, '127.0.0.1');
  }

  /**
   * Presses a key as a phone does with RFC 4733 (telephone-event `payloadType`): a first packet
   * with the marker, one more, then the end packet three times, 20 ms apart, all with the
   * event's one timestamp. Resolves after the last.
   */
  async pressKey(port: number, event: number, payloadType = 101): Promise<void> {
    const timestamp = this.timestamp;
    for (const [duration, end] of [
      [400, false],
      [800, false],
      [960, true],
      [960, true],
      [960, true],
    ] as const) {
      const payload = encodeTelephoneEvent({ event, end, volume: 10, duration });
      this.send(port, payload, { payloadType, timestamp, marker: duration === 400 });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    this.lose(); // the next event or audio gets a later timestamp
  }

  /** Numbers a packet and drops it, as a lossy network would. */
  lose(samples = 160): void {
    this.sequence = (this.sequence + 1) & 0xffff;
    this.timestamp = (this.timestamp + samples) >>> 0;
  }

  /** The timestamp the next packet gets. */
  get nextTimestamp(): number {
    return this.timestamp;
  }

  /** Sends payloads every `everyMs`, as a phone does; resolves after the last. */
  async stream(
    port: number,
    payloads: readonly Uint8Array[],
    options: { payloadType: number; everyMs?: number; samples?: number },
  ): Promise<void> {
    const every = options.everyMs ?? 20;
    const start = Date.now();
    for (let i = 0; i < payloads.length; i++) {
      const due = start + i * every - Date.now();
      if (due > 0) await new Promise((r) => setTimeout(r, due));
      this.send(port, payloads[i]!, {
        payloadType: options.payloadType,
        samples: options.samples,
        marker: i === 0,
      });
    }
  }

  /** Closes the socket; closing again (a test that closed it, then its teardown) waits the same. */
  close(): Promise<void> {
    this.closed ??= new Promise((resolve) => this.socket.close(() => resolve()));
    return this.closed;
  }
}
