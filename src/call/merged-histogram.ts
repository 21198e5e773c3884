import type { Registry } from 'prom-client';
import { LATENCY_BOUNDS, type LatencySnapshot } from '../media/worker/latency-counts.js';

/**
 * A histogram on /metrics whose observations are made elsewhere (in the media workers) and
 * arrive as bucket deltas: merged here, shown as Prometheus shows any histogram.
 */
export class MergedHistogram {
  private readonly buckets = new Array<number>(LATENCY_BOUNDS.length + 1).fill(0);
  private sum = 0;
  private count = 0;

  constructor(
    readonly name: string,
    private readonly help: string,
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  add(snapshot: LatencySnapshot): void {
    snapshot.buckets.forEach((n, i) => (this.buckets[i]! += n));
    this.sum += snapshot.sum;
    this.count += snapshot.count;
  }

  /** What prom-client's registry asks of a metric. */
  get(): {
    name: string;
    help: string;
    type: 'histogram';
    aggregator: 'sum';
    values: { metricName: string; labels: Record<string, string | number>; value: number }[];
  } {
    let cumulative = 0;
    type Value = { metricName: string; labels: Record<string, string | number>; value: number };
    const values: Value[] = LATENCY_BOUNDS.map((bound, i) => {
      cumulative += this.buckets[i]!;
      return { metricName: `${this.name}_bucket`, labels: { le: bound }, value: cumulative };
    });
    values.push({
      metricName: `${this.name}_bucket`,
      labels: { le: '+Inf' },
      value: this.count,
    });
    values.push({ metricName: `${this.name}_sum`, labels: {}, value: this.sum });
    values.push({ metricName: `${this.name}_count`, labels: {}, value: this.count });
    return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values };
  }
}
