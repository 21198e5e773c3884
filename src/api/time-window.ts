import { invalidParameter } from '../core/errors.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** A list without time filters reads the last 7 days; a window is at most 30 days. */
export const DEFAULT_WINDOW_MS = 7 * DAY_MS;
export const MAX_WINDOW_MS = 30 * DAY_MS;

export const COMPARISONS = ['', '__gt', '__gte', '__lt', '__lte'] as const;
export type Comparison = (typeof COMPARISONS)[number];

/** The filter names of one time field: `name`, `name__gt`, `__gte`, `__lt`, `__lte`. */
export function timeFilterNames(name: string): string[] {
  return COMPARISONS.map((c) => `${name}${c}`);
}

/** Inclusive ms bounds one filter sets. */
export interface Bound {
  min?: number;
  max?: number;
}

/**
 * The bounds of a filter whose value names a span of time from `start` (a day for a date, a
 * second or an instant for a time): the exact filter is the span, `__gt` after it, `__lte`
 * up to its end.
 */
export function spanBound(start: number, span: number, comparison: Comparison): Bound {
  const end = start + span - 1;
  switch (comparison) {
    case '__gt':
      return { min: end + 1 };
    case '__gte':
      return { min: start };
    case '__lt':
      return { max: start - 1 };
    case '__lte':
      return { max: end };
    default:
      return { min: start, max: end };
  }
}

/**
 * The window (inclusive ms) a list reads from the filters on time field `name`: the last 7
 * days without one, the 7 days before an upper bound alone, from a lower bound alone to now;
 * at most 30 days. `bound` reads one filter's value into its bounds, or throws the 400 that
 * names what is wrong with it.
 */
export function timeWindow(
  q: Record<string, unknown>,
  name: string,
  now: number,
  bound: (value: string, comparison: Comparison, filter: string) => Bound,
): { min: number; max: number | undefined } {
  let min = -Infinity;
  let max = Infinity;
  for (const comparison of COMPARISONS) {
    const filter = `${name}${comparison}`;
    const raw = q[filter];
    if (raw === undefined) continue;
    const b = bound(String(raw), comparison, filter);
    if (b.min !== undefined) min = Math.max(min, b.min);
    if (b.max !== undefined) max = Math.min(max, b.max);
  }
  if (min === -Infinity && max === Infinity)
    return { min: now - DEFAULT_WINDOW_MS, max: undefined };
  if (min === -Infinity) min = max - DEFAULT_WINDOW_MS;
  else if (max === Infinity) max = Math.max(now, min);
  if (max - min > MAX_WINDOW_MS)
    throw invalidParameter(`invalid ${name}: must be a range of at most 30 days`);
  return { min, max };
}
