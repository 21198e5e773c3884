import { randomBytes } from 'node:crypto';

/** A source of random 32-bit unsigned integers; tests pass a seeded one. */
export type RandomUint32 = () => number;

export const cryptoRandomUint32: RandomUint32 = () => randomBytes(4).readUInt32BE(0);

export interface SendStreamOptions {
  /** Timestamp units per second: 8000 for PCMU and PCMA. */
  clockRate: number;
  random?: RandomUint32;
  /** Fixed values, when a test or a relay needs them; random otherwise. */
  ssrc?: number;
  initialSequence?: number;
  initialTimestamp?: number;
}

export interface RtpSendPosition {
  sequenceNumber: number;
  timestamp: number;
}

/**
 * The sending side of one source: SSRC, sequence number and timestamp, each starting random
 * (RFC 3550 5.1: "The initial value of the sequence number SHOULD be random"), and the counts
 * an SR carries.
 */
export class RtpSendStream {
  readonly ssrc: number;
  private rate: number;
  private sequence: number;
  private nextTimestamp: number;
  private packets = 0;
  private octets = 0;
  private last: { timestamp: number; atMs: number } | undefined;

  constructor(options: SendStreamOptions) {
    if (!Number.isInteger(options.clockRate) || options.clockRate <= 0)
      throw new RangeError(
        `Expected a positive integer for clockRate but received ${options.clockRate}`,
      );
    const random = options.random ?? cryptoRandomUint32;
    this.rate = options.clockRate;
    this.ssrc = (options.ssrc ?? random()) >>> 0;
    this.sequence = (options.initialSequence ?? random()) & 0xffff;
    this.nextTimestamp = (options.initialTimestamp ?? random()) >>> 0;
  }

  /**
   * Hands out the sequence number and timestamp for the next packet carrying `samples`
   * samples; the sequence wraps at 2^16 and the timestamp at 2^32. A packet that must carry
   * another timestamp (each packet of an RFC 4733 event carries the event's start) passes
   * it as `timestamp`; the running timestamp still advances by `samples`.
   */
  advance(
    samples: number,
    payloadOctets: number,
    nowMs: number,
    timestamp = this.nextTimestamp,
  ): RtpSendPosition {
    const position = { sequenceNumber: this.sequence, timestamp: timestamp >>> 0 };
    // The SR's clock follows the running timestamp, whatever this packet carries.
    this.last = { timestamp: this.nextTimestamp, atMs: nowMs };
    this.sequence = (this.sequence + 1) & 0xffff;
    this.nextTimestamp = (this.nextTimestamp + samples) >>> 0;
    this.packets = (this.packets + 1) >>> 0;
    this.octets = (this.octets + payloadOctets) >>> 0;
    return position;
  }

  get clockRate(): number {
    return this.rate;
  }

  /**
   * A new clock rate, when offer/answer settled a codec with another clock (Opus's 48 kHz)
   * than the one the session opened with; the running timestamp goes on from where it is.
   */
  setClockRate(clockRate: number): void {
    if (!Number.isInteger(clockRate) || clockRate <= 0)
      throw new RangeError(`Expected a positive integer for clockRate but received ${clockRate}`);
    this.rate = clockRate;
  }

  /** The timestamp the next packet gets by default. */
  get timestamp(): number {
    return this.nextTimestamp;
  }

  get packetCount(): number {
    return this.packets;
  }

  get octetCount(): number {
    return this.octets;
  }

  get hasSent(): boolean {
    return this.last !== undefined;
  }

  /** The RTP timestamp matching wallclock `nowMs`, for an SR (RFC 3550 6.4.1). */
  timestampAt(nowMs: number): number {
    if (!this.last) return this.nextTimestamp;
    const elapsed = Math.round(((nowMs - this.last.atMs) * this.rate) / 1000);
    return (this.last.timestamp + elapsed) >>> 0;
  }
}
