import { invalidParameter } from '../core/errors.js';
import { DEFAULT_CALL_WINDOW_MS, MAX_CALL_WINDOW_MS } from './routes/calls.js';

/** The filter names of one time field: `name`, `name__gt`, `__gte`, `__lt`, `__lte`. */
export function timeFilterNames(name: string): string[] {
  return [name, `${name}__gt`, `${name}__gte`, `${name}__lt`, `${name}__lte`];
}

/**
 * The window (inclusive ms) a list reads from the filters on time field `name`: the last 7
 * days without one, the 7 days before an upper bound alone, from a lower bound alone to now;
 * at most 30 days. `parse` reads the value of one filter into its start and how long it
 * lasts (a day for a date; for a time, a second as an exact filter and an instant as a bound);
 * `format` is what the 400 says a value must look like.
 */
export function timeWindow(
  q: Record<string, unknown>,
  name: string,
  now: number,
  parse: (value: string, filter: string) => { start: number; span: number } | null,
  format: string,
): { min: number; max: number | undefined } {
  let min = -Infinity;
  let max = Infinity;
  for (const filter of timeFilterNames(name)) {
    const raw = q[filter];
    if (raw === undefined) continue;
    const time = parse(String(raw), filter);
    if (time === null) throw invalidParameter(`invalid ${filter}: use the format ${format}`);
    const end = time.start + time.span - 1;
    if (filter === name) {
      min = Math.max(min, time.start);
      max = Math.min(max, end);
    } else if (filter.endsWith('__gt')) min = Math.max(min, end + 1);
    else if (filter.endsWith('__gte')) min = Math.max(min, time.start);
    else if (filter.endsWith('__lt')) max = Math.min(max, time.start - 1);
    else max = Math.min(max, end);
  }
  if (min === -Infinity && max === Infinity)
    return { min: now - DEFAULT_CALL_WINDOW_MS, max: undefined };
  if (min === -Infinity) min = max - DEFAULT_CALL_WINDOW_MS;
  else if (max === Infinity) max = Math.max(now, min);
  if (max - min > MAX_CALL_WINDOW_MS)
    throw invalidParameter(`invalid ${name}: must be a range of at most 30 days`);
  return { min, max };
}
