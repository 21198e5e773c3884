import { describe, expect, it } from 'vitest';
import { muLawDecode, muLawEncode } from '../../../../src/media/codec/g711.js';
import { l16FromNetwork, l16ToNetwork } from '../../../../src/media/codec/pcm-frame.js';
import { Resampler } from '../../../../src/media/codec/resampler.js';
import { chunks, concat, sineSnrDb, strongestFrequency, tone } from '../../../support/signal.js';

describe('the inbound and outbound signal path', () => {
  // The telephony test tone is 1004 Hz rather than 1000 (ITU-T O.132): at 8 kHz a 1000 Hz tone
  // repeats every 8 samples, so its quantisation error falls on its own harmonics and the SNR
  // looks 10 dB better than it is.
  it('carries a 1 kHz tone through mu-law, up to L16 16 kHz and back to 8 kHz', () => {
    const up = new Resampler(8000, 16000);
    const down = new Resampler(16000, 8000);
    const source = tone(8000, 1004, 2, 16000); // -6 dBFS
    const frames: Int16Array[] = [];
    for (const frame of chunks(source, [160])) {
      const pcmu = muLawEncode(frame); // caller's RTP payload
      const wideband = l16ToNetwork(up.process(muLawDecode(pcmu))); // to a 16 kHz L16 peer
      frames.push(down.process(l16FromNetwork(wideband))); // and back
    }
    const out = concat(frames);
    expect(out.length).toBe(source.length);
    // Skip the filters' start (a few ms) before measuring.
    const steady = out.subarray(400);
    expect(strongestFrequency(steady, 8000, 2)).toBe(1004);
    const snr = sineSnrDb(steady, 8000, 1004);
    expect(snr).toBeGreaterThanOrEqual(35);
  });
});
