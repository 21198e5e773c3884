/**
 * A jitter buffer pulled once per packet's worth of audio: packets go in as they arrive, in any
 * order, and come out in sequence, with each missing one signalled so the consumer can conceal
 * it.
 *
 * Its depth adapts: a packet arriving after its turn, or an underrun the network caused, adds
 * a frame of delay (one concealed frame is played to make room); a long stretch without either
 * takes a frame away again, by skipping the oldest frame, one at a time. What it holds beyond
 * its depth for a while (the burst after a network stall, a sender whose clock runs faster
 * than ours) is dropped, so that delay does not stay for the rest of the call. A sender that
 * paused (DTX, silence suppression: the next packet follows in sequence, its timestamp later
 * by the pause) is no underrun: its next talkspurt plays at once, at the same depth.
 */

/** A packet in; the payload is held as given (raw octets, or audio already decoded). */
export interface JitterPacket<P = Uint8Array> {
  sequenceNumber: number;
  timestamp: number;
  payload: P;
}

export type JitterOutput<P = Uint8Array> =
  | { kind: 'frame'; payload: P; seq: number; ts: number }
  | { kind: 'lost'; seq: number; ts: number }
  | { kind: 'empty' };

export type PushResult = 'queued' | 'duplicate' | 'late';

export interface JitterBufferOptions {
  /** Depth in frames to start with, and the least it shrinks to. */
  minDepth?: number;
  /** The most depth in frames that lateness can grow it to. */
  maxDepth?: number;
  /** The most packets held; beyond it the oldest go. */
  capacity?: number;
  /** Timestamp units per frame, to date lost frames: 160 for 20 ms at 8 kHz. */
  frameSamples?: number;
  /** Frames without lateness or underrun before the depth shrinks by one. */
  shrinkAfterFrames?: number;
}

export interface JitterBufferStats {
  /** Arrived after their turn had been played or signalled lost. */
  late: number;
  /** Signalled lost, or skipped over after an underrun. */
  lost: number;
  duplicates: number;
  /** Target depth in frames now. */
  depth: number;
  /** Packets held now. */
  buffered: number;
  underruns: number;
  /** Dropped because the buffer was full, or skipped to shrink the depth. */
  discarded: number;
}

/** A jump this far from the playout point means the sender restarted (RFC 3550 A.1's dropout). */
const RESTART_DISTANCE = 3000;
/**
 * Pulls over which the least held beyond the depth is watched: packets held beyond it at every
 * pull of this long (half a second of 20 ms packets) are delay standing, not jitter.
 */
const DRAIN_WINDOW = 25;
/**
 * Standing packets dropped one a window up to this many; more (a long stall's burst) go at
 * once, one jump back to the depth instead of seconds of a call behind.
 */
const DRAIN_GRADUALLY = 5;

export class JitterBuffer<P = Uint8Array> {
  private readonly minDepth: number;
  private readonly maxDepth: number;
  private readonly capacity: number;
  private readonly frameSamples: number;
  private readonly shrinkAfter: number;
  private readonly held = new Map<number, JitterPacket<P>>();
  private depth: number;
  /** Extended sequence number of the next frame to play; undefined until playout starts. */
  private next: number | undefined;
  /** The highest extended sequence number seen, the reference for unwrapping. */
  private highest: number | undefined;
  /** After an underrun, the frame playout stopped at. */
  private resumeFrom: number | undefined;
  private lastTimestamp: number | undefined;
  /**
   * The last packet played (its extended number, -1 before the first, and timestamp), and the
   * timestamp step from the one before it, when in sequence: two numbers, not an object a frame.
   */
  private lastPlayedSeq = -1;
  private lastPlayedTs = 0;
  private step = 0;
  /** Whether the underrun in progress grew the depth (once the network was found the cause). */
  private grownForUnderrun = false;
  private stretch = 0;
  private calmFrames = 0;
  private drainPulls = 0;
  private leastSurplus = Infinity;
  private readonly counts = { late: 0, lost: 0, duplicates: 0, underruns: 0, discarded: 0 };

  constructor(options: JitterBufferOptions = {}) {
    this.minDepth = positiveInteger(options.minDepth ?? 2, 'minDepth');
    this.maxDepth = positiveInteger(options.maxDepth ?? 10, 'maxDepth');
    this.capacity = positiveInteger(options.capacity ?? 50, 'capacity');
    this.frameSamples = positiveInteger(options.frameSamples ?? 160, 'frameSamples');
    this.shrinkAfter = positiveInteger(options.shrinkAfterFrames ?? 500, 'shrinkAfterFrames');
    if (this.maxDepth < this.minDepth || this.capacity < this.maxDepth)
      throw new RangeError(
        `Expected minDepth <= maxDepth <= capacity but received ${this.minDepth}, ${this.maxDepth}, ${this.capacity}`,
      );
    this.depth = this.minDepth;
  }

  get stats(): JitterBufferStats {
    return { ...this.counts, depth: this.depth, buffered: this.held.size };
  }

  push(packet: JitterPacket<P>): PushResult {
    let seq = this.unwrap(packet.sequenceNumber);
    if (this.floor !== undefined && Math.abs(seq - this.floor) > RESTART_DISTANCE) {
      this.restart();
      seq = this.unwrap(packet.sequenceNumber);
    }
    if (this.floor !== undefined && seq < this.floor) {
      this.counts.late++;
      this.grow();
      return 'late';
    }
    if (this.held.has(seq)) {
      this.counts.duplicates++;
      return 'duplicate';
    }
    this.held.set(seq, packet);
    if (this.highest === undefined || seq > this.highest) this.highest = seq;
    if (this.held.size > this.capacity) this.discardOldest();
    return 'queued';
  }

  /** Called once per frame period; says what to play. */
  pull(): JitterOutput<P> {
    if (this.next === undefined && !this.startPlayout()) return { kind: 'empty' };
    if (this.stretch > 0) {
      this.stretch--;
      return { kind: 'empty' };
    }
    if (this.held.size === 0) return this.underrun();
    this.maybeShrink();
    this.maybeDrain();
    const seq = this.next!;
    this.next = seq + 1;
    const packet = this.held.get(seq);
    if (packet) {
      this.held.delete(seq);
      this.lastTimestamp = packet.timestamp;
      if (this.lastPlayedSeq === seq - 1) {
        this.step = (packet.timestamp - this.lastPlayedTs) >>> 0;
      }
      this.lastPlayedSeq = seq;
      this.lastPlayedTs = packet.timestamp;
      return { kind: 'frame', payload: packet.payload, seq: seq & 0xffff, ts: packet.timestamp };
    }
    this.counts.lost++;
    const ts = ((this.lastTimestamp ?? 0) + this.frameSamples) >>> 0;
    this.lastTimestamp = ts;
    return { kind: 'lost', seq: seq & 0xffff, ts };
  }

  /**
   * The payload the next pull plays, when it is held: after a pull said 'lost', the packet
   * after the lost one (whose FEC data may rebuild it). `ahead` looks further: 1 is the one
   * the pull after next plays.
   */
  peekNext(ahead = 0): P | undefined {
    return this.next === undefined ? undefined : this.held.get(this.next + ahead)?.payload;
  }

  /** Forgets everything held; the next packet starts playout afresh. */
  restart(): void {
    this.held.clear();
    this.next = undefined;
    this.resumeFrom = undefined;
    this.highest = undefined;
    this.lastPlayedSeq = -1;
    this.step = 0;
    this.grownForUnderrun = false;
    this.stretch = 0;
    this.drainPulls = 0;
    this.leastSurplus = Infinity;
  }

  /** Packets numbered below this are late: their turn has passed. */
  private get floor(): number | undefined {
    return this.next ?? this.resumeFrom;
  }

  private startPlayout(): boolean {
    if (this.resumeFrom !== undefined && this.held.size > 0) {
      const first = this.held.get(this.resumeFrom);
      if (first !== undefined && this.senderPaused(this.resumeFrom, first.timestamp)) {
        // The talkspurt after a pause: nothing was late, so it plays now, at the same depth.
        this.next = this.resumeFrom;
        this.resumeFrom = undefined;
        return true;
      }
      if (!this.grownForUnderrun) {
        this.grownForUnderrun = true;
        this.grow();
      }
    }
    if (this.held.size < this.depth) return false;
    const oldest = this.oldest();
    // Frames whose turn passed during an underrun are gone.
    if (this.resumeFrom !== undefined) this.counts.lost += oldest - this.resumeFrom;
    this.resumeFrom = undefined;
    this.next = oldest;
    return true;
  }

  /**
   * Nothing to play. Which it was shows with the next packet: the sender's pause (it follows
   * in sequence, its timestamp moved on by the pause: RFC 3551 4.1's talkspurts, RFC 7587
   * 3.1.3's DTX) plays at once; the network's holding packets back makes the buffer one frame
   * deeper and waits for `depth` packets again.
   */
  private underrun(): JitterOutput<P> {
    this.counts.underruns++;
    this.calmFrames = 0;
    this.grownForUnderrun = false;
    this.stretch = 0;
    this.resumeFrom = this.next;
    this.next = undefined;
    return { kind: 'empty' };
  }

  /**
   * Whether the packet numbered `seq` resumes after the sender paused: its timestamp is
   * later than the packets between it and the last played account for, by more than a packet.
   */
  private senderPaused(seq: number, timestamp: number): boolean {
    const last = this.lastPlayedSeq;
    if (last < 0 || this.step === 0 || seq <= last) return false;
    const elapsed = (timestamp - this.lastPlayedTs) >>> 0;
    return elapsed > (seq - last + 1) * this.step && elapsed < 0x80000000;
  }

  private oldest(): number {
    let oldest = Infinity;
    for (const seq of this.held.keys()) if (seq < oldest) oldest = seq;
    return oldest;
  }

  private grow(): void {
    this.calmFrames = 0;
    if (this.depth >= this.maxDepth) return;
    this.depth++;
    if (this.next !== undefined) this.stretch++;
  }

  private maybeShrink(): void {
    if (++this.calmFrames < this.shrinkAfter) return;
    this.calmFrames = 0;
    if (this.depth <= this.minDepth) return;
    this.depth--;
    const span = this.highest! - this.next! + 1;
    if (span > this.depth && this.held.has(this.next!)) this.skipNext();
  }

  /**
   * Drops what has stood beyond the depth for a whole window: one packet a window while that
   * is a few (clock drift, a small burst), all of it at once after a stall.
   */
  private maybeDrain(): void {
    this.leastSurplus = Math.min(this.leastSurplus, this.held.size - this.depth);
    if (++this.drainPulls < DRAIN_WINDOW) return;
    const standing = this.leastSurplus;
    this.drainPulls = 0;
    this.leastSurplus = Infinity;
    const drop = standing > DRAIN_GRADUALLY ? standing : Math.min(standing, 1);
    for (let i = 0; i < drop && this.held.size > this.depth; i++) this.skipNext();
  }

  /** Skips the next frame: its packet is discarded, or it is lost when it never came. */
  private skipNext(): void {
    if (this.held.delete(this.next!)) this.counts.discarded++;
    else this.counts.lost++;
    this.next!++;
  }

  private discardOldest(): void {
    const oldest = this.oldest();
    this.held.delete(oldest);
    this.counts.discarded++;
    if (this.next !== undefined && this.next <= oldest) this.next = oldest + 1;
  }

  /** The extended number nearest the highest seen for a 16-bit sequence number. */
  private unwrap(seq: number): number {
    const reference = this.highest ?? this.floor;
    if (reference === undefined) return seq + 65536;
    const delta = ((seq - (reference & 0xffff) + 32768) & 0xffff) - 32768;
    return reference + delta;
  }
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`Expected a positive integer for ${name} but received ${value}`);
  return value;
}
