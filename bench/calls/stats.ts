/** The q-quantile (0..1) of `values` by nearest rank, rounded to 0.1; null when there are none. */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return Math.round(sorted[rank]! * 10) / 10;
}

/** p50, p99 and the largest value, in the values' unit. */
export function percentiles(values: readonly number[]): {
  p50: number | null;
  p99: number | null;
  max: number | null;
} {
  return { p50: quantile(values, 0.5), p99: quantile(values, 0.99), max: quantile(values, 1) };
}

/** A count per key, for failures by kind. */
export function tally(keys: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}
