import { toneFrequencies, type DtmfDigit } from './dtmf-digit.js';

/** Each of the two tones peaks at -12 dBFS, so their sum never clips. */
const AMPLITUDE = 0.25 * 32767;

/**
 * A digit's tone as 16-bit PCM (in-band DTMF, for peers that did not negotiate RFC 4733):
 * its row and column frequencies summed, `durationMs` long at `rate`.
 */
export function dtmfTone(digit: DtmfDigit, durationMs: number, rate: number): Int16Array {
  if (!Number.isFinite(durationMs) || durationMs <= 0) {
    throw new RangeError(`Expected a positive durationMs but received ${durationMs}`);
  }
  const [low, high] = toneFrequencies(digit);
  const out = new Int16Array(Math.round((durationMs * rate) / 1000));
  for (let i = 0; i < out.length; i++) {
    const t = i / rate;
    out[i] = Math.round(
      AMPLITUDE * (Math.sin(2 * Math.PI * low * t) + Math.sin(2 * Math.PI * high * t)),
    );
  }
  return out;
}
