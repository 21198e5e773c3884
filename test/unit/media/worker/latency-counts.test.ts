import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { MergedHistogram } from '../../../../src/call/merged-histogram.js';
import { LATENCY_BOUNDS, LatencyCounts } from '../../../../src/media/worker/latency-counts.js';

describe('stream latency histograms', () => {
  it('puts each observation in the first bucket whose bound holds it, and starts over on take', () => {
    const counts = new LatencyCounts();
    expect(counts.empty).toBe(true);
    counts.observe(0.00005); // under the first bound
    counts.observe(0.001); // exactly on a bound: that bucket
    counts.observe(0.0011);
    counts.observe(3); // past the last bound: +Inf
    const taken = counts.take();
    expect(taken.count).toBe(4);
    expect(taken.sum).toBeCloseTo(3.00215, 6);
    expect(taken.buckets[0]).toBe(1);
    expect(taken.buckets[LATENCY_BOUNDS.indexOf(0.001)]).toBe(1);
    expect(taken.buckets[LATENCY_BOUNDS.indexOf(0.002)]).toBe(1);
    expect(taken.buckets[LATENCY_BOUNDS.length]).toBe(1);
    expect(counts.empty).toBe(true);
    expect(counts.take().count).toBe(0);
  });

  it('merges the workers deltas into one cumulative Prometheus histogram', async () => {
    const registry = new Registry();
    const merged = new MergedHistogram('test_latency_seconds', 'a test histogram', registry);
    const a = new LatencyCounts();
    a.observe(0.0003);
    a.observe(0.004);
    const b = new LatencyCounts();
    b.observe(0.0003);
    b.observe(1);
    merged.add(a.take());
    merged.add(b.take());
    const text = await registry.metrics();
    expect(text).toContain('# TYPE test_latency_seconds histogram');
    expect(text).toContain('test_latency_seconds_bucket{le="0.00025"} 0');
    expect(text).toContain('test_latency_seconds_bucket{le="0.0005"} 2');
    expect(text).toContain('test_latency_seconds_bucket{le="0.005"} 3');
    expect(text).toContain('test_latency_seconds_bucket{le="0.25"} 3');
    expect(text).toContain('test_latency_seconds_bucket{le="+Inf"} 4');
    expect(text).toContain('test_latency_seconds_count 4');
    expect(text).toMatch(/test_latency_seconds_sum 1\.0046/);
  });
});
