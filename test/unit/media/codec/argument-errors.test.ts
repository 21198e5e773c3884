import { describe, expect, it } from 'vitest';
import { muLawDecode, muLawEncode } from '../../../../src/media/codec/g711.js';
import { NoiseSuppressor } from '../../../../src/media/codec/noise-suppressor.js';
import { gain, l16FromNetwork, mix } from '../../../../src/media/codec/pcm-frame.js';
import { Resampler } from '../../../../src/media/codec/resampler.js';
import type { SampleRate } from '../../../../src/media/codec/argument-checks.js';

describe('argument checks', () => {
  it('reject bad arguments with specific messages before reaching the addon', () => {
    expect(() => new NoiseSuppressor(16000, 120)).toThrow(
      new RangeError(
        'Expected an integer between 60 and 100 for noiseCancellationLevel but received 120',
      ),
    );
    expect(() => new NoiseSuppressor(8000, 80).process(new Int16Array(161))).toThrow(
      new RangeError('Expected an Int16Array of 80 samples (10 ms at 8000 Hz) but received 161'),
    );
    expect(() => new Resampler(44100 as SampleRate, 8000)).toThrow(
      new RangeError(
        'Expected one of 8000, 16000, 24000, 48000 (Hz) for fromRate but received 44100',
      ),
    );
    expect(() => new Resampler(8000, 16000, { quality: 11 })).toThrow(
      'Expected an integer between 0 and 10 for quality but received 11',
    );
    expect(() => muLawEncode(Buffer.alloc(320) as unknown as Int16Array)).toThrow(
      new TypeError('Expected an Int16Array for pcm but received Buffer of 320'),
    );
    expect(() => muLawDecode(new Int16Array(160) as unknown as Uint8Array)).toThrow(
      new TypeError('Expected a Uint8Array or Buffer for codes but received Int16Array of 160'),
    );
    expect(() => l16FromNetwork(Buffer.alloc(321))).toThrow(
      'Expected an even number of bytes for an L16 payload but received 321',
    );
    expect(() => mix([new Int16Array(160), new Int16Array(320)])).toThrow(
      'Expected frames of equal length to mix but frames[0] has 160 samples and frames[1] has 320',
    );
    expect(() => mix([])).toThrow(
      'Expected a non-empty array of Int16Array frames but received an array of 0',
    );
    expect(() => gain(new Int16Array(160), Number.NaN)).toThrow(
      'Expected a finite number for gainDb but received NaN',
    );
  });
});
