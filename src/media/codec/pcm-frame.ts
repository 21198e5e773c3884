import { addon } from './native-addon.js';
import {
  checkFiniteNumber,
  checkInt16Array,
  checkUint8Array,
  describe,
} from './argument-checks.js';

/**
 * Helpers on frames of mono 16-bit linear PCM. Every function returns a new array and leaves
 * its input untouched.
 */

/** L16 payload (RFC 3551 4.5.11: network byte order) to host samples. */
export function l16FromNetwork(payload: Uint8Array): Int16Array {
  checkUint8Array(payload, 'payload');
  if (payload.length % 2 !== 0) {
    throw new RangeError(
      `Expected an even number of bytes for an L16 payload but received ${payload.length}`,
    );
  }
  return addon.l16FromNetwork(payload);
}

/** Host samples to an L16 payload in network byte order. */
export function l16ToNetwork(pcm: Int16Array): Buffer {
  return addon.l16ToNetwork(checkInt16Array(pcm, 'pcm'));
}

/** `a` then `b` in one new array. */
export function concatPcm(a: Int16Array, b: Int16Array): Int16Array {
  const out = new Int16Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Sums equal-length frames, saturating once at the end (so the order of sources is moot). */
export function mix(frames: readonly Int16Array[]): Int16Array {
  if (!Array.isArray(frames) || frames.length === 0) {
    throw new TypeError(
      `Expected a non-empty array of Int16Array frames but received ${describe(frames)}`,
    );
  }
  const length = checkInt16Array(frames[0], 'frames[0]').length;
  frames.forEach((frame, i) => {
    checkInt16Array(frame, `frames[${i}]`);
    if (frame.length !== length) {
      throw new RangeError(
        `Expected frames of equal length to mix but frames[0] has ${length} samples and frames[${i}] has ${frame.length}`,
      );
    }
  });
  return addon.mix(frames as Int16Array[]);
}

/** Applies a gain in dB (negative attenuates), rounding and saturating. */
export function gain(pcm: Int16Array, gainDb: number): Int16Array {
  checkInt16Array(pcm, 'pcm');
  checkFiniteNumber(gainDb, 'gainDb');
  return addon.gain(pcm, 10 ** (gainDb / 20));
}

/**
 * RMS level in dBFS, relative to 32768: a full-scale square wave is 0 dBFS, a full-scale sine
 * -3.01 dBFS, silence (or an empty frame) -Infinity.
 */
export function energyDbfs(pcm: Int16Array): number {
  return addon.energyDbfs(checkInt16Array(pcm, 'pcm'));
}
