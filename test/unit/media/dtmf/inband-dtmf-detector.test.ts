import { describe, expect, it } from 'vitest';
import {
  DTMF_DIGITS,
  InbandDtmfDetector,
  type DtmfDigit,
} from '../../../../src/media/dtmf/index.js';
import { seededRandom } from '../../../support/prng.js';

const RATE = 8000;
const ROWS: Record<string, number> = { '1': 697, '4': 770, '7': 852, '*': 941 };
const FREQUENCIES: Record<DtmfDigit, [number, number]> = {
  '1': [697, 1209],
  '2': [697, 1336],
  '3': [697, 1477],
  A: [697, 1633],
  '4': [770, 1209],
  '5': [770, 1336],
  '6': [770, 1477],
  B: [770, 1633],
  '7': [852, 1209],
  '8': [852, 1336],
  '9': [852, 1477],
  C: [852, 1633],
  '*': [941, 1209],
  '0': [941, 1336],
  '#': [941, 1477],
  D: [941, 1633],
};

function tones(ms: number, parts: readonly [frequency: number, amplitude: number][]): number[] {
  return Array.from({ length: (ms * RATE) / 1000 }, (_, n) =>
    parts.reduce((sum, [f, a]) => sum + a * Math.sin((2 * Math.PI * f * n) / RATE), 0),
  );
}

function silence(ms: number): number[] {
  return new Array<number>((ms * RATE) / 1000).fill(0);
}

function key(digit: DtmfDigit, ms: number, lowDb = -10, highDb = -10): number[] {
  const [low, high] = FREQUENCIES[digit];
  return tones(ms, [
    [low, 32767 * 10 ** (lowDb / 20)],
    [high, 32767 * 10 ** (highDb / 20)],
  ]);
}

/** Runs the detector over the signal in 20 ms frames, as RTP delivers it. */
function detect(signal: readonly number[]): string {
  const detector = new InbandDtmfDetector();
  const pcm = Int16Array.from(signal, (s) => Math.max(-32768, Math.min(32767, Math.round(s))));
  let digits = '';
  for (let i = 0; i < pcm.length; i += 160) {
    for (const found of detector.process(pcm.subarray(i, i + 160))) digits += found.digit;
  }
  return digits;
}

describe('in-band DTMF detection (Goertzel)', () => {
  it('detects all 16 digits, each once', () => {
    const signal = DTMF_DIGITS.flatMap((digit) => [...key(digit, 80), ...silence(60)]);
    expect(detect(signal)).toBe(DTMF_DIGITS.join(''));
  });

  it('reports where the press began', () => {
    const detector = new InbandDtmfDetector();
    const pcm = Int16Array.from([...silence(100), ...key('5', 100), ...silence(40)]);
    const found = detector.process(pcm);
    expect(found).toHaveLength(1);
    expect(found[0]!.digit).toBe('5');
    expect(Math.abs(found[0]!.sampleOffset - 800)).toBeLessThanOrEqual(102);
  });

  it('reports one digit for a long press, and two for two presses of the same key', () => {
    expect(detect([...key('8', 1000), ...silence(50)])).toBe('8');
    expect(detect([...key('8', 60), ...silence(50), ...key('8', 60), ...silence(50)])).toBe('88');
  });

  it('detects 45 ms tones in noise at any alignment, and not 20 ms ones', () => {
    const random = seededRandom(7);
    for (let shift = 0; shift < 102; shift += 17) {
      const noise = () => (random() - 0.5) * 200;
      const signal = [...silence(shift / 8), ...key('3', 45), ...silence(50)].map(
        (s) => s + noise(),
      );
      expect(detect(signal)).toBe('3');
      expect(detect([...silence(shift / 8), ...key('3', 20), ...silence(50)])).toBe('');
    }
  });

  it('accepts twist within 8 dB normal and 4 dB reverse, and rejects more', () => {
    expect(detect([...key('6', 80, -6, -13), ...silence(40)])).toBe('6');
    expect(detect([...key('6', 80, -10, -7), ...silence(40)])).toBe('6');
    expect(detect([...key('6', 80, -6, -16), ...silence(40)])).toBe('');
    expect(detect([...key('6', 80, -12, -6), ...silence(40)])).toBe('');
  });

  it('rejects a single tone, quiet tones, white noise and speech-like sound', () => {
    expect(detect(tones(500, [[ROWS['1']!, 10000]]))).toBe('');
    expect(detect(tones(500, [[1336, 10000]]))).toBe('');
    expect(detect(key('2', 500, -60, -60))).toBe('');
    const random = seededRandom(42);
    expect(detect(Array.from({ length: 16000 }, () => (random() - 0.5) * 20000))).toBe('');
    // A voiced sound: a gliding 110-180 Hz fundamental with falling harmonics, plus breath.
    let phase = 0;
    const speech = Array.from({ length: 24000 }, (_, n) => {
      phase += (2 * Math.PI * (145 + 35 * Math.sin((2 * Math.PI * n) / 4000))) / RATE;
      let sample = 0;
      for (let h = 1; h <= 25; h++) sample += (6000 / h) * Math.sin(h * phase);
      return sample + (random() - 0.5) * 1500;
    });
    expect(detect(speech)).toBe('');
  });

  it('keeps state across frames of any length', () => {
    const detector = new InbandDtmfDetector();
    const pcm = Int16Array.from([...key('#', 100), ...silence(40), ...key('0', 100)]);
    const found: string[] = [];
    for (let i = 0; i < pcm.length; i += 37) {
      found.push(...detector.process(pcm.subarray(i, i + 37)).map((d) => d.digit));
    }
    expect(found.join('')).toBe('#0');
  });
});
