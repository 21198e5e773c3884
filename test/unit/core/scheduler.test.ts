import { describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../src/core/scheduler.js';

describe('ManualScheduler', () => {
  it('runs due timers in time order, with now() at each timer, including ones set while running', () => {
    const s = new ManualScheduler(1000);
    const ran: [string, number][] = [];
    s.after(300, () => ran.push(['b', s.now()]));
    s.after(100, () => {
      ran.push(['a', s.now()]);
      s.after(50, () => ran.push(['a2', s.now()]));
    });
    const cancelled = s.after(200, () => ran.push(['never', s.now()]));
    cancelled.cancel();
    s.advance(250);
    expect(ran).toEqual([
      ['a', 1100],
      ['a2', 1150],
    ]);
    expect(s.now()).toBe(1250);
    s.advance(50);
    expect(ran.at(-1)).toEqual(['b', 1300]);
    expect(s.timersPending).toBe(0);
  });
});
