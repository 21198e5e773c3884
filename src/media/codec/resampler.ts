import { addon, type NativeResampler } from './native-addon.js';
import {
  checkInt16Array,
  checkIntegerInRange,
  checkRate,
  type SampleRate,
} from './argument-checks.js';

export interface ResamplerOptions {
  /** speexdsp quality, 0 (fastest) to 10 (best); 3 is speex's VoIP setting. */
  quality?: number;
}

/**
 * Streaming resampler for mono 16-bit PCM between 8, 16, 24 and 48 kHz (libspeexdsp). One per
 * direction of a call: it keeps the filter history between frames, so audio must be fed in
 * order.
 *
 * Output lengths are exact: after any sequence of calls, the total output is
 * floor(total input * to / from), so 20 ms in gives 20 ms out whenever the rates divide it, and
 * odd-sized chunks never make the stream drift. The filter delays the audio by
 * `inputLatency` input samples (3 ms at quality 3); the first output carries that much
 * leading silence.
 */
export class Resampler {
  readonly fromRate: SampleRate;
  readonly toRate: SampleRate;
  readonly #native: NativeResampler;

  constructor(fromRate: SampleRate, toRate: SampleRate, options: ResamplerOptions = {}) {
    this.fromRate = checkRate(fromRate, 'fromRate');
    this.toRate = checkRate(toRate, 'toRate');
    const quality = checkIntegerInRange(options.quality ?? 3, 0, 10, 'quality');
    this.#native = new addon.Resampler(fromRate, toRate, quality);
  }

  /** Delay the filter adds, in input samples. */
  get inputLatency(): number {
    return this.#native.inputLatency();
  }

  process(pcm: Int16Array): Int16Array {
    return this.#native.process(checkInt16Array(pcm, 'pcm'));
  }
}

/**
 * Converts a whole recording (rendered speech, a decoded file) to a call's rate in one go.
 * Unlike the streaming Resampler, the filter's delay is trimmed and its tail flushed, so the
 * output lines up with the input and is exactly floor(length * to / from) samples. The
 * source may be at any rate from 8000 to 48000 Hz (espeak-ng speaks at 22050).
 */
export function convertRate(
  pcm: Int16Array,
  fromRate: number,
  toRate: SampleRate,
  options: ResamplerOptions = {},
): Int16Array {
  checkInt16Array(pcm, 'pcm');
  checkIntegerInRange(fromRate, 8000, 48000, 'fromRate');
  checkRate(toRate, 'toRate');
  if (fromRate === toRate) return pcm;
  const quality = checkIntegerInRange(options.quality ?? 3, 0, 10, 'quality');
  const native = new addon.Resampler(fromRate, toRate, quality);
  const latency = native.inputLatency();
  const padded = new Int16Array(pcm.length + latency);
  padded.set(pcm);
  const out = native.process(padded);
  const skip = Math.floor((latency * toRate) / fromRate);
  return out.slice(skip, skip + Math.floor((pcm.length * toRate) / fromRate));
}
