import { describe, expect, it } from 'vitest';
import { LossConcealment } from '../../../../src/media/jitter/loss-concealment.js';

describe('LossConcealment', () => {
  it('is silence before any frame was played', () => {
    expect(Array.from(new LossConcealment().conceal(4))).toEqual([0, 0, 0, 0]);
  });

  it('repeats the last frame, fading to silence over the given frames', () => {
    const concealment = new LossConcealment(2);
    concealment.played(Int16Array.of(1000, 1000, 1000, 1000));
    // Gain runs 1 → 0.5 across the first concealed frame, 0.5 → 0 across the second.
    expect(Array.from(concealment.conceal(4))).toEqual([1000, 875, 750, 625]);
    expect(Array.from(concealment.conceal(4))).toEqual([500, 375, 250, 125]);
    expect(Array.from(concealment.conceal(4))).toEqual([0, 0, 0, 0]);
  });

  it('starts over at full level after a frame is played again', () => {
    const concealment = new LossConcealment(4);
    concealment.played(Int16Array.of(-2000, 2000));
    concealment.conceal(2);
    concealment.played(Int16Array.of(400, -400));
    expect(Array.from(concealment.conceal(2))).toEqual([400, -350]);
  });

  it('refuses a fade of no frames', () => {
    expect(() => new LossConcealment(0)).toThrow(/fadeFrames/);
  });
});
