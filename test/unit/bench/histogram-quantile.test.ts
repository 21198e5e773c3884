import { describe, expect, it } from 'vitest';
import {
  histogramDelta,
  histogramQuantile,
  readHistogram,
} from '../../../bench/streams/histogram.js';

const NAME = 'voxgate_stream_inbound_latency_seconds';

const exposition = (counts: [string, number][], sum: number, labels = '') =>
  [
    `# HELP ${NAME} RTP packet arrival to its media event sent`,
    `# TYPE ${NAME} histogram`,
    ...counts.map(([le, c]) => `${NAME}_bucket{${labels}le="${le}"} ${c}`),
    `${NAME}_sum${labels ? `{${labels.slice(0, -1)}}` : ''} ${sum}`,
    `${NAME}_count${labels ? `{${labels.slice(0, -1)}}` : ''} ${counts.at(-1)![1]}`,
  ].join('\n');

describe('readHistogram', () => {
  it('reads the cumulative buckets, count and sum of one histogram', () => {
    const body = `${exposition(
      [
        ['0.001', 2],
        ['0.002', 5],
        ['+Inf', 6],
      ],
      0.01,
    )}\nvoxgate_media_sessions 3\n`;
    expect(readHistogram(body, NAME)).toEqual({
      bounds: [0.001, 0.002, Infinity],
      counts: [2, 5, 6],
      count: 6,
      sum: 0.01,
    });
  });

  it('adds label sets together', () => {
    const one = exposition(
      [
        ['0.001', 1],
        ['+Inf', 2],
      ],
      1,
      'worker="0",',
    );
    const two = exposition(
      [
        ['0.001', 3],
        ['+Inf', 3],
      ],
      2,
      'worker="1",',
    );
    const h = readHistogram(`${one}\n${two}`, NAME);
    expect(h?.counts).toEqual([4, 5]);
    expect(h?.count).toBe(5);
    expect(h?.sum).toBe(3);
  });

  it('is null when the body does not have the histogram', () => {
    expect(readHistogram('voxgate_media_sessions 0\n', NAME)).toBeNull();
  });
});

describe('histogramQuantile', () => {
  const h = {
    bounds: [0.001, 0.002, 0.005, Infinity],
    counts: [0, 50, 100, 100],
    count: 100,
    sum: 0.2,
  };

  it('interpolates linearly within the bucket that holds the rank', () => {
    // rank 50 of 100: the top of the (0.001, 0.002] bucket.
    expect(histogramQuantile(h, 0.5)?.value).toBeCloseTo(0.002, 9);
    // rank 25: halfway through the 50 observations in (0.001, 0.002].
    expect(histogramQuantile(h, 0.25)?.value).toBeCloseTo(0.0015, 9);
    // rank 99: 49 of the 50 in (0.002, 0.005].
    expect(histogramQuantile(h, 0.99)?.value).toBeCloseTo(0.002 + 0.003 * (49 / 50), 9);
    expect(histogramQuantile(h, 0.99)?.aboveHighestBound).toBe(false);
  });

  it('starts the first bucket at zero', () => {
    const first = { bounds: [0.004, Infinity], counts: [10, 10], count: 10, sum: 0 };
    expect(histogramQuantile(first, 0.5)?.value).toBeCloseTo(0.002, 9);
  });

  it('answers the highest finite bound, flagged, when the rank is in +Inf', () => {
    const high = { bounds: [0.001, 0.002, Infinity], counts: [1, 2, 100], count: 100, sum: 9 };
    expect(histogramQuantile(high, 0.99)).toEqual({ value: 0.002, aboveHighestBound: true });
  });

  it('is null when nothing was observed', () => {
    expect(histogramQuantile({ ...h, counts: [0, 0, 0, 0], count: 0 }, 0.5)).toBeNull();
  });

  it('reads the quantiles of what was observed between two readings', () => {
    const before = {
      bounds: [0.001, 0.002, Infinity],
      counts: [100, 100, 100],
      count: 100,
      sum: 1,
    };
    const after = { bounds: [0.001, 0.002, Infinity], counts: [100, 200, 200], count: 200, sum: 2 };
    const delta = histogramDelta(before, after);
    expect(delta.counts).toEqual([0, 100, 100]);
    expect(delta.count).toBe(100);
    expect(histogramQuantile(delta, 0.5)?.value).toBeCloseTo(0.0015, 9);
    expect(histogramQuantile(delta, 0.99)?.value).toBeCloseTo(0.00199, 9);
  });
});
