import { addon, type NativeNoiseSuppressor } from './native-addon.js';
import {
  checkInt16Array,
  checkIntegerInRange,
  checkRate,
  type SampleRate,
} from './argument-checks.js';

/**
 * `noise_cancellation_level` (60-100) onto libwebrtc-audio-processing's four suppression
 * levels, in bands of ten: 60-69 kLow, 70-79 kModerate, 80-89 kHigh, 90-100 kVeryHigh. Higher
 * levels remove more noise at the cost of more speech distortion.
 */
export const NOISE_SUPPRESSION_LEVELS = ['low', 'moderate', 'high', 'very-high'] as const;
export type NoiseSuppressionLevel = (typeof NOISE_SUPPRESSION_LEVELS)[number];

export function noiseSuppressionLevel(noiseCancellationLevel: number): NoiseSuppressionLevel {
  checkIntegerInRange(noiseCancellationLevel, 60, 100, 'noiseCancellationLevel');
  return NOISE_SUPPRESSION_LEVELS[Math.min(3, Math.floor((noiseCancellationLevel - 60) / 10))]!;
}

/**
 * Noise suppression on 10 ms frames of mono 16-bit PCM at the call's own rate, before any
 * resampling (libwebrtc-audio-processing 0.3, noise suppression alone: no echo cancellation,
 * gain control or high-pass filter). One per call leg: it learns the noise over the first
 * half second or so and keeps that estimate between frames.
 *
 * The library processes at 8, 16, 32 or 48 kHz. At 24 kHz it runs at 32 kHz internally,
 * converting on the way in and out.
 */
export class NoiseSuppressor {
  readonly rate: SampleRate;
  readonly noiseCancellationLevel: number;
  readonly level: NoiseSuppressionLevel;
  /** Samples in each frame `process` takes and returns (10 ms). */
  readonly frameSamples: number;
  readonly #native: NativeNoiseSuppressor;

  constructor(rate: SampleRate, noiseCancellationLevel: number) {
    this.rate = checkRate(rate, 'rate');
    this.level = noiseSuppressionLevel(noiseCancellationLevel);
    this.noiseCancellationLevel = noiseCancellationLevel;
    this.frameSamples = rate / 100;
    this.#native = new addon.NoiseSuppressor(rate, NOISE_SUPPRESSION_LEVELS.indexOf(this.level));
  }

  /** Any whole number of 10 ms frames in (a call's 20 ms, say), denoised out (a new array). */
  processFrames(pcm: Int16Array): Int16Array {
    const out = new Int16Array(pcm.length);
    const step = this.frameSamples;
    for (let at = 0; at + step <= pcm.length; at += step) {
      out.set(this.process(pcm.subarray(at, at + step)), at);
    }
    return out;
  }

  /** One 10 ms frame in, the same frame denoised out (a new array). */
  process(frame: Int16Array): Int16Array {
    checkInt16Array(frame, 'frame');
    if (frame.length !== this.frameSamples) {
      throw new RangeError(
        `Expected an Int16Array of ${this.frameSamples} samples (10 ms at ${this.rate} Hz) but received ${frame.length}`,
      );
    }
    return this.#native.process(frame);
  }
}
