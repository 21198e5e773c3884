/**
 * What a receiver knows about one source: sequence tracking across wraparound with probation
 * (RFC 3550 A.1), loss (A.3) and interarrival jitter (A.8), and what it needs for the report
 * block it sends back.
 */

const RTP_SEQ_MOD = 1 << 16;
const TIMESTAMP_MOD = 2 ** 32;
/** RFC 3550 A.1's constants. */
export const MAX_DROPOUT = 3000;
export const MAX_MISORDER = 100;
export const MIN_SEQUENTIAL = 2;

export interface ReceptionReport {
  ssrc: number;
  /** Lost since the previous report, in 1/256ths (RFC 3550 6.4.1). */
  fractionLost: number;
  /** Cumulative lost, clamped to 24-bit signed. */
  cumulativeLost: number;
  extendedHighestSequence: number;
  /** Interarrival jitter in timestamp units. */
  jitter: number;
  /** Middle 32 bits of the NTP time of the last SR received, 0 if none. */
  lastSenderReport: number;
  /** Delay since that SR in 1/65536 seconds, 0 if none. */
  delaySinceLastSenderReport: number;
}

export type SequenceVerdict = 'accepted' | 'probation' | 'duplicate-or-reordered' | 'bad-jump';

export class ReceiveStatistics {
  private maxSeq = 0;
  private cycles = 0;
  private baseSeq = 0;
  private badSeq = RTP_SEQ_MOD + 1;
  private probation = MIN_SEQUENTIAL;
  private receivedCount = 0;
  private expectedPrior = 0;
  private receivedPrior = 0;
  private transit: number | undefined;
  private jitterEstimate = 0;
  private started = false;
  private lastSr: { middle: number; arrivalMs: number } | undefined;

  constructor(
    readonly ssrc: number,
    readonly clockRate: number,
  ) {}

  /**
   * Takes one packet's sequence number and timestamp with its arrival time; says whether the
   * source counts it as valid (RFC 3550 A.1's update_seq returning 1).
   */
  update(sequenceNumber: number, timestamp: number, arrivalMs: number): SequenceVerdict {
    if (!this.started) {
      this.started = true;
      this.initSequence(sequenceNumber);
      this.maxSeq = (sequenceNumber - 1) & 0xffff;
      this.probation = MIN_SEQUENTIAL;
    }
    const verdict = this.updateSequence(sequenceNumber);
    if (verdict === 'accepted' || verdict === 'duplicate-or-reordered')
      this.updateJitter(timestamp, arrivalMs);
    return verdict;
  }

  /** Notes an SR from this source for the LSR and DLSR of the next report (RFC 3550 6.4.1). */
  senderReportReceived(ntpMiddle: number, arrivalMs: number): void {
    this.lastSr = { middle: ntpMiddle >>> 0, arrivalMs };
  }

  get received(): number {
    return this.receivedCount;
  }

  get extendedHighestSequence(): number {
    return this.cycles + this.maxSeq;
  }

  /** RFC 3550 A.3: expected = extended max - base + 1. */
  get expected(): number {
    return this.extendedHighestSequence - this.baseSeq + 1;
  }

  get lost(): number {
    return this.expected - this.receivedCount;
  }

  get jitter(): number {
    return Math.floor(this.jitterEstimate);
  }

  /** Whether probation is over and the source has been taken as valid. */
  get valid(): boolean {
    return this.started && this.probation === 0;
  }

  /** Builds a report block and starts the next reporting interval. */
  report(nowMs: number): ReceptionReport {
    const expected = this.expected;
    const expectedInterval = expected - this.expectedPrior;
    this.expectedPrior = expected;
    const receivedInterval = this.receivedCount - this.receivedPrior;
    this.receivedPrior = this.receivedCount;
    const lostInterval = expectedInterval - receivedInterval;
    const fractionLost =
      expectedInterval === 0 || lostInterval <= 0
        ? 0
        : Math.floor((lostInterval * 256) / expectedInterval);
    const lastSr = this.lastSr;
    return {
      ssrc: this.ssrc,
      fractionLost: Math.min(fractionLost, 255),
      cumulativeLost: Math.max(-0x800000, Math.min(0x7fffff, this.lost)),
      extendedHighestSequence: this.extendedHighestSequence >>> 0,
      jitter: this.jitter >>> 0,
      lastSenderReport: lastSr?.middle ?? 0,
      delaySinceLastSenderReport: lastSr
        ? Math.floor(((nowMs - lastSr.arrivalMs) * 65536) / 1000) >>> 0
        : 0,
    };
  }

  private initSequence(seq: number): void {
    this.baseSeq = seq;
    this.maxSeq = seq;
    this.badSeq = RTP_SEQ_MOD + 1;
    this.cycles = 0;
    this.receivedCount = 0;
    this.receivedPrior = 0;
    this.expectedPrior = 0;
  }

  /** RFC 3550 A.1, update_seq. */
  private updateSequence(seq: number): SequenceVerdict {
    const udelta = (seq - this.maxSeq) & 0xffff;
    if (this.probation > 0) {
      // RFC 3550 A.1: a source is valid only after MIN_SEQUENTIAL packets in sequence.
      if (seq === ((this.maxSeq + 1) & 0xffff)) {
        this.probation--;
        this.maxSeq = seq;
        if (this.probation === 0) {
          this.initSequence(seq);
          this.receivedCount++;
          return 'accepted';
        }
      } else {
        this.probation = MIN_SEQUENTIAL - 1;
        this.maxSeq = seq;
      }
      return 'probation';
    }
    if (udelta < MAX_DROPOUT) {
      // In order, with a permissible gap; a smaller number means the 16 bits wrapped.
      if (seq < this.maxSeq) this.cycles += RTP_SEQ_MOD;
      this.maxSeq = seq;
    } else if (udelta <= RTP_SEQ_MOD - MAX_MISORDER) {
      // A very large jump: two in a row mean the sender restarted; resynchronise on the second.
      if (seq !== this.badSeq) {
        this.badSeq = (seq + 1) & 0xffff;
        return 'bad-jump';
      }
      this.initSequence(seq);
    } else {
      this.receivedCount++;
      return 'duplicate-or-reordered';
    }
    this.receivedCount++;
    return 'accepted';
  }

  /** RFC 3550 A.8: J += (|D| - J) / 16, in timestamp units. */
  private updateJitter(timestamp: number, arrivalMs: number): void {
    const arrival = (arrivalMs * this.clockRate) / 1000;
    const transit = arrival - timestamp;
    if (this.transit !== undefined) {
      let d = (transit - this.transit) % TIMESTAMP_MOD;
      // The timestamp wraps at 2^32: take the difference in the signed 32-bit range.
      if (d > TIMESTAMP_MOD / 2) d -= TIMESTAMP_MOD;
      if (d < -TIMESTAMP_MOD / 2) d += TIMESTAMP_MOD;
      this.jitterEstimate += (Math.abs(d) - this.jitterEstimate) / 16;
    }
    this.transit = transit;
  }
}
