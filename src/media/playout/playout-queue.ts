import { mix } from '../codec/pcm-frame.js';
import type { PlayoutSource } from './playout-source.js';

export type PlayoutMode = 'mix' | 'replace';

interface Playing {
  source: PlayoutSource;
  onDone?: () => void;
  /** Plays until removed: no stop() or 'replace' ends it (a stream's audio, see play()). */
  standing?: boolean;
}

/**
 * What one call leg plays out: several sources at once (speech, files, a stream's audio),
 * each added to mix with the others or to replace them. frame() gives the next frame, the
 * sources summed with saturation, silence when nothing plays; a source that ends is dropped
 * and its onDone called.
 */
export class PlayoutQueue {
  private playing: Playing[] = [];
  /** The frame played when nothing plays: always this one array, so it can be recognised. */
  readonly silence: Int16Array;
  /**
   * The highest frequency the last frame of audio held (see PlayoutSource.audioBand), or null
   * when a source of it did not say: what an encoder that picks its band needs to know.
   */
  band: number | null = null;

  constructor(readonly frameSamples: number) {
    if (!Number.isInteger(frameSamples) || frameSamples < 1) {
      throw new RangeError(`Expected a frame of at least 1 sample but received ${frameSamples}`);
    }
    this.silence = new Int16Array(frameSamples);
  }

  /**
   * Sources with something to say: every one but a standing source that has nothing queued
   * (a stream whose server is quiet), which must not hold back what else the leg would send.
   */
  get active(): number {
    let active = 0;
    for (const p of this.playing) if (!p.standing || (p.source.ready?.(1) ?? true)) active++;
    return active;
  }

  /**
   * Whether a frame is there to play without waiting: some source has a whole frame to give
   * now, or none is playing (so no audio is on its way).
   */
  get ready(): boolean {
    if (this.playing.length === 0) return true;
    return this.playing.some((p) => p.source.ready?.(this.frameSamples) ?? true);
  }

  /**
   * Adds a source. `standing`: it plays until remove() (a bidirectional stream's audio, which
   * its server starts and clears itself), so stopping what plays (a key pressed during a
   * prompt, a Dial's music ending, a Speak that replaces) leaves it alone; it is mixed with
   * whatever plays after.
   */
  play(
    source: PlayoutSource,
    options: { mode?: PlayoutMode; onDone?: () => void; standing?: boolean } = {},
  ): void {
    if ((options.mode ?? 'mix') === 'replace') this.stop();
    this.playing.push({ source, onDone: options.onDone, standing: options.standing === true });
  }

  /** Stops every source but the standing ones (each stopped is told it is done). */
  stop(): void {
    const stopped = this.playing.filter((p) => !p.standing);
    this.playing = this.playing.filter((p) => p.standing);
    for (const p of stopped) p.onDone?.();
  }

  /** Stops one source. */
  remove(source: PlayoutSource): void {
    const found = this.playing.find((p) => p.source === source);
    if (!found) return;
    this.playing = this.playing.filter((p) => p !== found);
    found.onDone?.();
  }

  frame(): Int16Array {
    if (this.playing.length === 0) return this.silence;
    const frames: Int16Array[] = [];
    let band: number | null = 0;
    for (const p of [...this.playing]) {
      const frame = this.fill(p);
      if (!frame) continue;
      frames.push(frame);
      const own = p.source.audioBand;
      band = own === undefined || band === null ? null : Math.max(band, own);
    }
    if (frames.length === 0) return this.silence;
    this.band = band;
    return frames.length === 1 ? frames[0]! : mix(frames);
  }

  /**
   * One frame of a source, padded with silence; null when it has nothing yet (a pushed source
   * waiting for audio), and null (the source dropped) at its end. A whole frame read at once
   * is played as the source gave it (sources give out their own memory, and nothing
   * downstream writes into a frame); only a frame pieced together or padded costs an array of
   * its own.
   */
  private fill(p: Playing): Int16Array | null {
    const first = p.source.read(this.frameSamples);
    if (first !== null && first.length === this.frameSamples) return first;
    if (first !== null && first.length === 0) return null;
    const out = new Int16Array(this.frameSamples);
    let filled = 0;
    for (let chunk = first; filled < this.frameSamples;) {
      if (chunk === null) {
        this.playing = this.playing.filter((q) => q !== p);
        p.onDone?.();
        return filled > 0 ? out : null;
      }
      if (chunk.length === 0) break; // the rest has not come yet
      out.set(chunk, filled);
      filled += chunk.length;
      if (filled < this.frameSamples) chunk = p.source.read(this.frameSamples - filled);
    }
    return out;
  }
}
