/** Upper bounds (seconds) of the stream latency histograms, as /metrics shows them. */
export const LATENCY_BOUNDS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25,
] as const;

/** Observations since the last take: per bucket (the last is +Inf), their sum and count. */
export interface LatencySnapshot {
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * A latency histogram a worker fills and hands up in deltas: cheap to observe on the media
 * path (no labels, no allocation), merged on the main thread into /metrics.
 */
export class LatencyCounts {
  private buckets = new Array<number>(LATENCY_BOUNDS.length + 1).fill(0);
  private sum = 0;
  private count = 0;

  observe(seconds: number): void {
    let i = 0;
    while (i < LATENCY_BOUNDS.length && seconds > LATENCY_BOUNDS[i]!) i++;
    this.buckets[i]!++;
    this.sum += seconds;
    this.count++;
  }

  get empty(): boolean {
    return this.count === 0;
  }

  /** What was observed since the last take, and a fresh start. */
  take(): LatencySnapshot {
    const snapshot = { buckets: this.buckets, sum: this.sum, count: this.count };
    this.buckets = new Array<number>(LATENCY_BOUNDS.length + 1).fill(0);
    this.sum = 0;
    this.count = 0;
    return snapshot;
  }
}
