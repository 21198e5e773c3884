import { afterEach, describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import type { AudioFormat } from '../../../../src/media/pipeline/audio-format.js';
import { MediaSession } from '../../../../src/media/pipeline/media-session.js';
import { StreamAudio } from '../../../../src/media/pipeline/stream-audio.js';
import { FrameClock } from '../../../../src/media/playout/frame-clock.js';
import { PortAllocator } from '../../../../src/media/rtp/port-range.js';
import { sineSnrDb, tone } from '../../../support/signal.js';

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
    const scheduler = new ManualScheduler();
    const base = 40000 + 2 * Math.floor(Math.random() * 5000);
    const session = await MediaSession.open(
      { formats: [L16_16K] },
      {
        allocator: new PortAllocator({ min: base, max: base + 9 }, '127.0.0.1'),
        clock: new FrameClock(scheduler),
        cname: 'stream-rate-test',
        scheduler,
      },
    );
    open.push(session);
    const played: Int16Array[] = [];
    session.addOutboundTap((pcm) => played.push(Int16Array.from(pcm)));
    const audio = new StreamAudio(session, {
      format: L16_8K,
      tracks: [],
      noiseCancellationLevel: null,
      bidirectional: true,
      onFrame: () => {},
      onDigit: () => {},
    });
    const sent = tone(8000, 1000, 2, 8000);
    for (let at = 0; at < sent.length; at += 160) {
      const chunk = sent.subarray(at, at + 160);
      audio.enqueue(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength), L16_8K);
      scheduler.advance(20);
    }
    audio.close();
    const heard = Int16Array.from(played.flatMap((frame) => [...frame]));
    // Half a second in, well inside the tone: resampled whole, 1 kHz is 80 dB above the rest;
    // resampled a chunk at a time, 40 dB.
    const steady = heard.subarray(8000, 8000 + 16000);
    expect(sineSnrDb(steady, 16000, 1000)).toBeGreaterThan(70);
  });
});
