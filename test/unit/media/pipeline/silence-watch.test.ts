import { describe, expect, it } from 'vitest';
import { SilenceWatch } from '../../../../src/media/pipeline/silence-watch.js';
import { tone } from '../../../support/signal.js';

const speech = tone(8000, 440, 0.02, 3000); // -20 dBFS: talking
const hiss = Int16Array.from({ length: 160 }, (_, i) => (i % 2 ? 150 : -150)); // -47 dBFS
const silent = new Int16Array(160);

/** Feeds frames until the watch decides; returns its verdict and after how many frames. */
function run(watch: SilenceWatch, frames: (Int16Array | null)[]) {
  for (let i = 0; i < frames.length; i++) {
    const verdict = watch.tick(frames[i]!);
    if (verdict !== null) return { verdict, frames: i + 1 };
  }
  return { verdict: null, frames: frames.length };
}

describe('SilenceWatch', () => {
  it('ends once the far end has been quiet for silenceMs after talking', () => {
    const frames = [...Array(50).fill(speech), ...Array(100).fill(silent)];
    // 1 s of talk, then 500 ms of silence: frame 50 + 25.
    expect(run(new SilenceWatch(500, 10_000), frames)).toEqual({ verdict: true, frames: 75 });
  });

  it('counts line noise and missing audio as silence, and any talk starts the count again', () => {
    const frames = [
      ...Array(10).fill(hiss),
      speech,
      ...Array(10).fill(null),
      ...Array(20).fill(hiss),
    ];
    // The talk at frame 11 resets it: 25 quiet frames after it end the wait at frame 36.
    expect(run(new SilenceWatch(500, 10_000), frames)).toEqual({ verdict: true, frames: 36 });
  });

  it('gives up at maxMs when the talking never stops', () => {
    expect(run(new SilenceWatch(500, 2000), Array(200).fill(speech))).toEqual({
      verdict: false,
      frames: 100,
    });
  });
});
