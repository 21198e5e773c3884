/** Audio a playout queue pulls from, a frame at a time. */
export interface PlayoutSource {
  /** Up to `samples` samples; fewer at the end; null once it has nothing more to give. */
  read(samples: number): Int16Array | null;
  /**
   * Whether `samples` can be read now, or what is left before the end (a pushed source may
   * be empty, or hold part of a frame, while the rest is on its way).
   */
  ready?(samples: number): boolean;
  /**
   * The highest frequency the audio holds, in Hz: half the rate it was made at (4000 for a
   * stream's 8 kHz audio played on a 16 kHz call). Absent: as wide as the call's rate.
   */
  readonly audioBand?: number;
}

/** Rendered or decoded audio (Speak, Play), once or looped. */
export class PcmSource implements PlayoutSource {
  private at = 0;

  constructor(
    private readonly samples: Int16Array,
    private readonly loop = false,
  ) {
    if (samples.length === 0) throw new RangeError('Expected audio to play but received none');
  }

  read(count: number): Int16Array | null {
    if (this.at >= this.samples.length) {
      if (!this.loop) return null;
      this.at = 0;
    }
    const out = this.samples.subarray(this.at, Math.min(this.at + count, this.samples.length));
    this.at += out.length;
    return out;
  }
}

/**
 * Audio pushed in as it arrives (a stream's playAudio): read at the frame clock however fast
 * it came, its chunks joined into frames whatever their sizes. `end()` lets it finish once
 * drained; until then an empty queue is silence, not the end.
 */
export class PushedSource implements PlayoutSource {
  /** `audioBand`: see PlayoutSource; unknown by default, and set as the audio changes. */
  constructor(public audioBand?: number) {}

  private readonly chunks: Int16Array[] = [];
  private offset = 0;
  private ended = false;
  /** Whether the last read gave audio: the audio is under way, not about to start. */
  private flowing = false;
  /** Whether the last read held back part of a frame that would have started the audio. */
  private held = false;
  queued = 0;

  push(pcm: Int16Array): void {
    if (this.ended) throw new Error('Expected no audio after end()');
    if (pcm.length === 0) return;
    this.chunks.push(pcm);
    this.queued += pcm.length;
  }

  end(): void {
    this.ended = true;
  }

  ready(samples: number): boolean {
    return this.queued >= samples || (this.queued > 0 && (this.ended || this.held));
  }

  /** Drops everything queued (clearAudio). */
  clear(): void {
    this.chunks.length = 0;
    this.offset = 0;
    this.queued = 0;
    this.flowing = false;
    this.held = false;
  }

  /**
   * Up to `count` samples. Part of a frame that would start the audio is held back for one
   * read, so that chunks smaller than a frame arriving together are played as one frame, not
   * each padded with silence; part of a frame that ends audio under way goes at once.
   */
  read(count: number): Int16Array | null {
    if (this.queued === 0) {
      this.flowing = false;
      return this.ended ? null : NOTHING;
    }
    if (this.queued < count && !this.ended && !this.flowing && !this.held) {
      this.held = true;
      return NOTHING;
    }
    this.held = false;
    this.flowing = true;
    const wanted = Math.min(count, this.queued);
    const first = this.take(wanted);
    // Within one chunk (a stream's chunks are often a frame each): a view, not a copy.
    if (first.length === wanted) return first;
    const out = new Int16Array(wanted);
    out.set(first);
    for (let filled = first.length; filled < wanted;) {
      const part = this.take(wanted - filled);
      if (part.length === 0) break; // a count that is not a whole number
      out.set(part, filled);
      filled += part.length;
    }
    return out;
  }

  /** Up to `count` samples of the first chunk, as a view; the chunk is let go once read. */
  private take(count: number): Int16Array {
    const chunk = this.chunks[0]!;
    const part = chunk.subarray(this.offset, Math.min(this.offset + count, chunk.length));
    this.offset += part.length;
    this.queued -= part.length;
    if (this.offset === chunk.length) {
      this.chunks.shift();
      this.offset = 0;
    }
    return part;
  }
}

const NOTHING = new Int16Array(0);
