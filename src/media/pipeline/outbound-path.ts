import type { SampleRate } from '../codec/argument-checks.js';
import { parseDigitString } from '../dtmf/digit-schedule.js';
import { digitPackets, type OutgoingEventPacket } from '../dtmf/dtmf-sender.js';
import { dtmfTone } from '../dtmf/dtmf-tone.js';
import { PlayoutQueue } from '../playout/playout-queue.js';

/** What goes out on one 20 ms tick: audio, or a packet of an RFC 4733 event. */
/** `band`: the highest frequency the audio holds, null when not known (see PlayoutQueue.band). */
export type OutboundItem =
  | { kind: 'audio'; pcm: Int16Array; band?: number | null }
  | { kind: 'event'; packet: OutgoingEventPacket };

export interface OutboundPathOptions {
  rate: SampleRate;
  /** The telephone-event clock rate when the peer negotiated RFC 4733; null sends tones. */
  telephoneEventRate: number | null;
}

export interface DigitOptions {
  /** Tone length per digit in ms (default 100). */
  toneMs?: number;
  /** RFC 4733 volume, -dBm0 (default 10). */
  volume?: number;
}

const TICK_MS = 20;

interface DigitJob {
  /** By tick, counted from the job's first tick: what replaces the audio then. */
  readonly items: Map<number, OutboundItem>;
  readonly ticks: number;
  start: number | null;
  resolve(completed: boolean): void;
}

/**
 * The sending half of a call leg: each tick takes one frame from the playout queue, unless
 * a digit is being sent, which replaces the audio for its duration (RFC 4733 packets when the
 * peer negotiated telephone-event, the tones themselves otherwise). Digit strings wait their
 * turn; `w` and `W` pause half a second and a second.
 */
export class OutboundPath {
  readonly frameSamples: number;
  readonly playout: PlayoutQueue;
  private readonly jobs: DigitJob[] = [];
  private telephoneEventRate: number | null;
  private tick = 0;

  constructor(private readonly options: OutboundPathOptions) {
    this.frameSamples = options.rate / 50;
    this.playout = new PlayoutQueue(this.frameSamples);
    this.telephoneEventRate = options.telephoneEventRate;
  }

  /** A re-INVITE may add or drop telephone-event; digits queued after it follow the change. */
  setTelephoneEventRate(rate: number | null): void {
    this.telephoneEventRate = rate;
  }

  get sendingDigits(): boolean {
    return this.jobs.length > 0;
  }

  /**
   * Queues a digit string (0-9 * # A-D, w, W); resolves true once the last digit and its gap
   * have gone out, false if stopped first. A malformed string throws DtmfParseError.
   */
  sendDigits(text: string, options: DigitOptions = {}): Promise<boolean> {
    const schedule = parseDigitString(text, { toneMs: options.toneMs });
    const items = new Map<number, OutboundItem>();
    for (const scheduled of schedule.digits) {
      let at = Math.round(scheduled.atMs / TICK_MS);
      // A digit never starts before the one ahead of it is over (end packets included).
      while (items.has(at)) at++;
      for (const item of this.digitItems(scheduled.digit, scheduled.durationMs, options)) {
        items.set(at++, item);
      }
    }
    const last = Math.max(...items.keys()) + 1;
    const ticks = Math.max(last, Math.ceil(schedule.totalMs / TICK_MS));
    return new Promise((resolve) => this.jobs.push({ items, ticks, start: null, resolve }));
  }

  /** Drops every queued digit string; each resolves false. */
  stopDigits(): void {
    for (const job of this.jobs.splice(0)) job.resolve(false);
  }

  next(): OutboundItem {
    const now = this.tick++;
    const job = this.jobs[0];
    if (job) {
      job.start ??= now;
      const offset = now - job.start;
      if (offset + 1 >= job.ticks) {
        this.jobs.shift();
        job.resolve(true);
      }
      const item = job.items.get(offset);
      if (item) return item;
    }
    const pcm = this.playout.frame();
    return { kind: 'audio', pcm, band: this.playout.band };
  }

  private digitItems(
    digit: Parameters<typeof dtmfTone>[0],
    durationMs: number,
    options: DigitOptions,
  ): OutboundItem[] {
    if (this.telephoneEventRate !== null) {
      return digitPackets(digit, {
        durationMs,
        volume: options.volume,
        clockRate: this.telephoneEventRate,
        intervalMs: TICK_MS,
      }).map((packet) => ({ kind: 'event', packet }));
    }
    const tone = dtmfTone(digit, durationMs, this.options.rate);
    const frames: OutboundItem[] = [];
    for (let at = 0; at < tone.length; at += this.frameSamples) {
      const pcm = new Int16Array(this.frameSamples);
      pcm.set(tone.subarray(at, at + this.frameSamples));
      frames.push({ kind: 'audio', pcm });
    }
    return frames;
  }
}
