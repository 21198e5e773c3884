import { describe, expect, it } from 'vitest';
import {
  AUTH_FAILURE_LIMIT,
  AUTH_FAILURE_WINDOW_MS,
  AuthFailures,
} from '../../../src/api/auth-failures.js';
import { ManualClock } from '../../../src/core/clock.js';

describe('AuthFailures', () => {
  it('lets 20 failures in a minute through and holds the address until the first is a minute old', () => {
    expect([AUTH_FAILURE_LIMIT, AUTH_FAILURE_WINDOW_MS]).toEqual([20, 60_000]);
    const clock = new ManualClock(1_000_000);
    const failures = new AuthFailures(clock);
    const reached: boolean[] = [];
    for (let k = 0; k < 20; k += 1) {
      expect(failures.waitFor('a')).toBe(0);
      reached.push(failures.failed('a'));
      clock.advance(100);
    }
    // Only the twentieth failure reaches the limit.
    expect(reached.indexOf(true)).toBe(19);
    expect(reached.filter(Boolean)).toHaveLength(1);
    expect(failures.waitFor('a')).toBe(60_000 - 2_000);
    expect(failures.waitFor('b')).toBe(0);
    clock.advance(60_000 - 2_000);
    expect(failures.waitFor('a')).toBe(0);
  });

  it('slides: no address gets more than the limit in any window, whatever the phase', () => {
    const clock = new ManualClock(0);
    const failures = new AuthFailures(clock, { limit: 3, windowMs: 1000 });
    failures.failed('a');
    failures.failed('a');
    clock.set(900);
    failures.failed('a');
    expect(failures.waitFor('a')).toBe(100);
    clock.set(1000);
    // The two at 0 have left the window; the one at 900 still counts.
    expect(failures.waitFor('a')).toBe(0);
    failures.failed('a');
    failures.failed('a');
    expect(failures.waitFor('a')).toBe(900);
  });
});
