import { afterEach, describe, expect, it } from 'vitest';
import type { AudioFormat } from '../../../../src/media/pipeline/audio-format.js';
import { MediaSession } from '../../../../src/media/pipeline/media-session.js';
import { sineSnrDb, tone } from '../../../support/signal.js';
import { streamLeg } from '../../../support/stream-leg.js';

/**
 * A stream's audio at another rate than the call's is played as one continuous signal: a tone
 * the server sends in 20 ms chunks at 8 kHz comes out of a 16 kHz leg as clean as the resampler
 * makes it, with no fade at each chunk's edges (50 times a second, a buzz under the audio).
 */
const L16_16K: AudioFormat = { encoding: 'L16', payloadType: 96, rate: 16000 };
const L16_8K = { encoding: 'l16', rate: 8000 } as const;
const open: MediaSession[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

describe("a stream's audio at another rate than the call's", () => {
  it('is played with its chunks joined as cleanly as the rest of it', async () => {
    const { session, audio, played, send, run } = await streamLeg(L16_16K, L16_8K);
    open.push(session);
    const sent = tone(8000, 1000, 2, 8000);
    for (let at = 0; at < sent.length; at += 160) {
      send(sent.subarray(at, at + 160));
      run(20);
    }
    audio.close();
    const heard = Int16Array.from(played.flatMap((frame) => [...frame]));
    // Half a second in, well inside the tone: resampled whole, 1 kHz is 80 dB above the rest;
    // resampled a chunk at a time, 40 dB.
    const steady = heard.subarray(8000, 8000 + 16000);
    expect(sineSnrDb(steady, 16000, 1000)).toBeGreaterThan(70);
  });
});
