import { describe, expect, it } from 'vitest';
import { SUPPORTED_RATES } from '../../../../src/media/codec/argument-checks.js';
import { convertRate, Resampler } from '../../../../src/media/codec/resampler.js';
import { chunks, concat, strongestFrequency, tone } from '../../../support/signal.js';

const ODD_CHUNKS = [1, 7, 161, 333, 13, 479, 2, 1021];

describe('Resampler', () => {
  for (const from of SUPPORTED_RATES) {
    for (const to of SUPPORTED_RATES) {
      it(`gives exactly ${to}/${from} of its input over 10 s fed in odd chunks (${from} -> ${to} Hz)`, () => {
        const resampler = new Resampler(from, to);
        const input = tone(from, 440, 10, 8000);
        let fed = 0;
        let produced = 0;
        for (const chunk of chunks(input, ODD_CHUNKS)) {
          fed += chunk.length;
          produced += resampler.process(chunk).length;
          // Never ahead of the input and never more than one sample behind it.
          expect(Math.floor((fed * to) / from) - produced).toBe(0);
        }
        expect(produced).toBe((input.length * to) / from);
      });
    }
  }

  it('gives 20 ms out for every 20 ms in', () => {
    const up = new Resampler(8000, 48000);
    const down = new Resampler(48000, 16000);
    for (const frame of chunks(tone(8000, 1000, 1, 8000), [160])) {
      const high = up.process(frame);
      expect(high.length).toBe(960);
      expect(down.process(high).length).toBe(320);
    }
  });

  it('keeps a tone at its frequency', () => {
    for (const [from, to] of [
      [8000, 24000],
      [48000, 16000],
      [24000, 16000],
    ] as const) {
      const resampler = new Resampler(from, to);
      const out = concat(
        [...chunks(tone(from, 1200, 1, 8000), [480])].map((c) => resampler.process(c)),
      );
      expect(strongestFrequency(out.subarray(200), to, 50)).toBe(1200);
    }
  });

  it('reports its filter delay', () => {
    const resampler = new Resampler(8000, 16000);
    expect(resampler.inputLatency).toBeGreaterThan(0);
    expect(resampler.inputLatency).toBeLessThan(80);
  });
});

describe('convertRate', () => {
  it('converts espeak-ng rate audio to a call rate, exact in length and not delayed', () => {
    for (const to of [8000, 16000, 24000] as const) {
      // Silence with one short burst at 0.5 s: the burst must stay at 0.5 s.
      const input = new Int16Array(22050);
      input.set(tone(22050, 1000, 0.01, 12000), 11025);
      const out = convertRate(input, 22050, to);
      expect(out.length).toBe(Math.floor((22050 * to) / 22050));
      const firstLoud = out.findIndex((s) => Math.abs(s) > 3000);
      expect(Math.abs(firstLoud - to / 2)).toBeLessThanOrEqual(to / 1000);
      expect(strongestFrequency(out.subarray(to / 2, to / 2 + to / 100), to, 50)).toBe(1000);
    }
  });

  it('returns the audio as it is at the same rate, and names a bad rate', () => {
    const pcm = tone(8000, 440, 0.1, 1000);
    expect(convertRate(pcm, 8000, 8000)).toBe(pcm);
    expect(() => convertRate(pcm, 4000, 8000)).toThrow(/fromRate/);
    expect(() => convertRate(pcm, 22050, 11025 as 8000)).toThrow(/toRate/);
  });
});
