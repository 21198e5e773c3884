/**
 * Prometheus histograms read from the text exposition format, the difference between two
 * readings, and quantiles interpolated within its buckets as Prometheus's histogram_quantile
 * does.
 */

/** One histogram summed over its label sets: cumulative counts by upper bound, ascending. */
export interface Histogram {
  /** Upper bounds (`le`), ascending; the last is Infinity. */
  bounds: number[];
  /** Cumulative count at each bound. */
  counts: number[];
  count: number;
  sum: number;
}

/** What a quantile says, and whether it fell in the +Inf bucket (then it is a lower bound). */
export interface Quantile {
  value: number;
  aboveHighestBound: boolean;
}

const sampleValue = (line: string) => Number(line.slice(line.lastIndexOf(' ') + 1));

/**
 * The histogram `name` in a /metrics body, its label sets (other than `le`) added together;
 * null when the body does not have it.
 */
export function readHistogram(body: string, name: string): Histogram | null {
  const byBound = new Map<number, number>();
  let count = 0;
  let sum = 0;
  let seen = false;
  for (const line of body.split('\n')) {
    if (!line.startsWith(name) || line.startsWith('#')) continue;
    const rest = line.slice(name.length);
    if (rest.startsWith('_bucket{')) {
      const le = /le="([^"]+)"/.exec(rest)?.[1];
      if (le === undefined) continue;
      const bound = le === '+Inf' ? Infinity : Number(le);
      byBound.set(bound, (byBound.get(bound) ?? 0) + sampleValue(line));
      seen = true;
    } else if (rest.startsWith('_count')) {
      count += sampleValue(line);
    } else if (rest.startsWith('_sum')) {
      sum += sampleValue(line);
    }
  }
  if (!seen) return null;
  const bounds = [...byBound.keys()].sort((a, b) => a - b);
  return { bounds, counts: bounds.map((b) => byBound.get(b)!), count, sum };
}

/** What was observed between two readings of the same histogram. */
export function histogramDelta(before: Histogram | null, after: Histogram): Histogram {
  if (!before) return after;
  const earlier = new Map(before.bounds.map((b, i) => [b, before.counts[i]!]));
  return {
    bounds: [...after.bounds],
    counts: after.counts.map((c, i) => c - (earlier.get(after.bounds[i]!) ?? 0)),
    count: after.count - before.count,
    sum: after.sum - before.sum,
  };
}

/**
 * The q-quantile (0..1): the bucket holding the observation of rank q x total, and a linear
 * interpolation between its lower and upper bound (the first bucket's lower bound is 0). When
 * that bucket is +Inf, the highest finite bound, flagged. Null when nothing was observed.
 */
export function histogramQuantile(histogram: Histogram, q: number): Quantile | null {
  const { bounds, counts } = histogram;
  const total = counts.at(-1) ?? 0;
  if (total <= 0 || bounds.length === 0) return null;
  const rank = q * total;
  let i = counts.findIndex((c) => c >= rank);
  if (i === -1) i = counts.length - 1;
  const upper = bounds[i]!;
  if (upper === Infinity) {
    const highest = bounds.length > 1 ? bounds[bounds.length - 2]! : 0;
    return { value: highest, aboveHighestBound: true };
  }
  const lower = i === 0 ? 0 : bounds[i - 1]!;
  const below = i === 0 ? 0 : counts[i - 1]!;
  const inside = counts[i]! - below;
  if (inside <= 0) return { value: upper, aboveHighestBound: false };
  return { value: lower + ((upper - lower) * (rank - below)) / inside, aboveHighestBound: false };
}
