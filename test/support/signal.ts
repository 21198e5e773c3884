/** Measurements on test signals: tones, single-frequency power, SNR against a fitted sine. */

export function tone(rate: number, hz: number, seconds: number, amplitude: number): Int16Array {
  return Int16Array.from({ length: Math.round(rate * seconds) }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)),
  );
}

/** Goertzel: power of `samples` at `hz`, normalised to the mean square of a sine there. */
export function powerAt(samples: ArrayLike<number>, rate: number, hz: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * hz) / rate);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < samples.length; i++) {
    const s0 = samples[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const n = samples.length;
  return (2 * (s1 * s1 + s2 * s2 - coeff * s1 * s2)) / (n * n);
}

/** The frequency on a grid of `step` Hz (up to Nyquist) where `samples` has the most power. */
export function strongestFrequency(samples: ArrayLike<number>, rate: number, step = 50): number {
  let best = 0;
  let bestPower = -1;
  for (let hz = step; hz < rate / 2; hz += step) {
    const p = powerAt(samples, rate, hz);
    if (p > bestPower) [best, bestPower] = [hz, p];
  }
  return best;
}

/**
 * SNR in dB of `samples` as a sine at `hz`: the least-squares fit a sin + b cos (any phase, so
 * any delay) is the signal, the residual is noise and distortion.
 */
export function sineSnrDb(samples: ArrayLike<number>, rate: number, hz: number): number {
  let ss = 0;
  let cc = 0;
  let sc = 0;
  let xs = 0;
  let xc = 0;
  for (let i = 0; i < samples.length; i++) {
    const s = Math.sin((2 * Math.PI * hz * i) / rate);
    const c = Math.cos((2 * Math.PI * hz * i) / rate);
    ss += s * s;
    cc += c * c;
    sc += s * c;
    xs += samples[i]! * s;
    xc += samples[i]! * c;
  }
  const det = ss * cc - sc * sc;
  const a = (xs * cc - xc * sc) / det;
  const b = (xc * ss - xs * sc) / det;
  let signal = 0;
  let noise = 0;
  for (let i = 0; i < samples.length; i++) {
    const fit =
      a * Math.sin((2 * Math.PI * hz * i) / rate) + b * Math.cos((2 * Math.PI * hz * i) / rate);
    signal += fit * fit;
    noise += (samples[i]! - fit) ** 2;
  }
  return 10 * Math.log10(signal / noise);
}

/** Splits `pcm` into consecutive chunks of the given sizes, cycling through them. */
export function* chunks(pcm: Int16Array, sizes: readonly number[]): Generator<Int16Array> {
  let offset = 0;
  for (let k = 0; offset < pcm.length; k++) {
    const size = sizes[k % sizes.length]!;
    yield pcm.subarray(offset, offset + size);
    offset += size;
  }
}

export function concat(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
