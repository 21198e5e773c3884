import { describe, expect, it } from 'vitest';
import { ConferenceMixer } from '../../../../src/media/conference/conference-mixer.js';
import { FLOOR_HOLD_MS, FLOOR_MIN_RMS } from '../../../../src/media/conference/conference-floor.js';
import type { MediaSession } from '../../../../src/media/pipeline/media-session.js';

/** Enough of a session for the mixer: its voice goes to its taps; the mix it is played is dropped. */
class Voice {
  readonly taps = new Set<(frame: Int16Array) => void>();
  readonly rate = 8000 as const;
  addTap(tap: (frame: Int16Array) => void): () => void {
    this.taps.add(tap);
    return () => this.taps.delete(tap);
  }
  paceByTicks(): () => void {
    return () => {};
  }
  play(): Promise<boolean> {
    return new Promise(() => {});
  }
  /** One 20 ms frame of a square wave of this amplitude (its RMS). */
  speak(amplitude: number): void {
    const frame = new Int16Array(160).map((_, i) => (i % 2 === 0 ? amplitude : -amplitude));
    for (const tap of this.taps) tap(frame);
  }
}

const HOLD_TICKS = FLOOR_HOLD_MS / 20;
const LOUD = 8000;

function room(members: number) {
  const ticks = new Set<() => void>();
  const taken: string[] = [];
  const mixer = new ConferenceMixer(
    {
      add(tick) {
        ticks.add(tick);
        return () => ticks.delete(tick);
      },
    },
    (sessionId) => taken.push(sessionId),
  );
  const voices = Array.from({ length: members }, () => new Voice());
  voices.forEach((v, i) =>
    mixer.join(`m${i}`, v as unknown as MediaSession, { muted: false, deaf: false }),
  );
  /** `n` ticks, on each of which the members speak at these amplitudes (0: nothing heard). */
  const run = (n: number, ...amplitudes: number[]) => {
    for (let t = 0; t < n; t++) {
      amplitudes.forEach((a, i) => a > 0 && voices[i]!.speak(a));
      ticks.forEach((tick) => tick());
    }
  };
  return { mixer, taken, run };
}

describe('the conference floor', () => {
  it('goes to a member who is the loudest voice for the whole hold, once', () => {
    const { taken, run } = room(2);
    run(HOLD_TICKS - 1, LOUD, 0);
    expect(taken).toEqual([]);
    run(1, LOUD, 0);
    expect(taken).toEqual(['m0']);
    run(50, LOUD, LOUD / 2);
    expect(taken, 'the holder keeps it while loudest').toEqual(['m0']);
  });

  it('moves to the louder of two voices, and stays through silence', () => {
    const { taken, run } = room(2);
    run(HOLD_TICKS, LOUD, 0);
    run(HOLD_TICKS, LOUD / 4, LOUD);
    expect(taken).toEqual(['m0', 'm1']);
    run(100, 0, 0);
    run(100, 0, LOUD);
    expect(taken).toEqual(['m0', 'm1']);
  });

  it('is not moved by a voice loudest for less than the hold, nor by breaks in between', () => {
    const { taken, run } = room(2);
    run(HOLD_TICKS, LOUD, 0);
    for (let i = 0; i < 5; i++) {
      run(HOLD_TICKS - 1, 0, LOUD);
      run(1, 0, 0);
    }
    expect(taken).toEqual(['m0']);
  });

  it('is not taken by a voice under the threshold, nor by a muted member', () => {
    const { mixer, taken, run } = room(2);
    run(HOLD_TICKS * 3, FLOOR_MIN_RMS - 10, 0);
    expect(taken).toEqual([]);
    mixer.update('m1', { muted: true });
    run(HOLD_TICKS * 3, 0, LOUD);
    expect(taken).toEqual([]);
    run(HOLD_TICKS, FLOOR_MIN_RMS + 10, LOUD);
    expect(taken).toEqual(['m0']);
  });

  it('is nobody once its holder leaves: the holder taking it again is news', () => {
    const { mixer, taken, run } = room(2);
    run(HOLD_TICKS, 0, LOUD);
    mixer.leave('m1');
    run(HOLD_TICKS, LOUD);
    expect(taken).toEqual(['m1', 'm0']);
  });
});
