import { describe, expect, it } from 'vitest';
import { formatCallbackTime, formatTime } from '../../../src/core/record-time.js';

describe('record times', () => {
  it('formats a record time in UTC to the second, with its offset', () => {
    expect(formatTime(Date.UTC(2026, 10, 26, 19, 5, 7, 999))).toBe('2026-11-26 19:05:07+00:00');
    expect(formatTime(null)).toBeNull();
  });

  it('formats callback times without the offset, and each second by its own value', () => {
    const start = Date.UTC(2026, 0, 1, 0, 0, 59, 500);
    expect(formatCallbackTime(start)).toBe('2026-01-01 00:00:59');
    expect(formatCallbackTime(start + 500)).toBe('2026-01-01 00:01:00');
    expect(formatCallbackTime(start)).toBe('2026-01-01 00:00:59');
    expect(formatTime(start + 500)).toBe('2026-01-01 00:01:00+00:00');
    // Before 1970: the second is floored, not truncated towards zero.
    expect(formatCallbackTime(-1)).toBe('1969-12-31 23:59:59');
  });
});
