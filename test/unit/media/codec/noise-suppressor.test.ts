import { describe, expect, it } from 'vitest';
import {
  NoiseSuppressor,
  noiseSuppressionLevel,
} from '../../../../src/media/codec/noise-suppressor.js';

describe('noiseSuppressionLevel', () => {
  it('maps noise_cancellation_level onto the four library levels in bands of ten', () => {
    expect([60, 69, 70, 79, 80, 89, 90, 100].map(noiseSuppressionLevel)).toEqual([
      'low',
      'low',
      'moderate',
      'moderate',
      'high',
      'high',
      'very-high',
      'very-high',
    ]);
  });
});

describe('NoiseSuppressor', () => {
  it('takes and returns 10 ms frames at each rate', () => {
    for (const rate of [8000, 16000, 24000, 48000] as const) {
      const suppressor = new NoiseSuppressor(rate, 80);
      expect(suppressor.frameSamples).toBe(rate / 100);
      expect(suppressor.process(new Int16Array(rate / 100)).length).toBe(rate / 100);
    }
  });
});
