import { readFileSync } from 'node:fs';
import type { CallsGateway } from '../calls/gateway.js';
import { histogramDelta, histogramQuantile, readHistogram, type Histogram } from './histogram.js';

/** RTP packet arrival to its WebSocket media event sent. */
export const INBOUND_LATENCY = 'voxgate_stream_inbound_latency_seconds';
/** playAudio received to its first RTP packet sent. */
export const PLAYOUT_LATENCY = 'voxgate_stream_playout_latency_seconds';

export interface MetricsReading {
  inbound: Histogram | null;
  playout: Histogram | null;
  mediaSessions: number | null;
}

/** p50 and p99 in ms of what a histogram observed over a step; null when it was not there. */
export interface LatencyFigures {
  p50Ms: number | null;
  p99Ms: number | null;
  meanMs: number | null;
  observations: number;
  /** The p99 fell in the +Inf bucket: it is at least the value shown. */
  p99AboveHighestBucket: boolean;
  /**
   * Share of observations at most `withinMs` (a bucket bound, so exact), %: where buckets are
   * wide, an interpolated p99 can sit far above most of the bucket's observations.
   */
  withinPercent: number | null;
  withinMs: number;
}

/** GET /metrics, with the API's Basic authorization; null readings when it fails. */
export async function readGatewayMetrics(gateway: CallsGateway): Promise<MetricsReading> {
  try {
    const res = await fetch(`${gateway.baseUrl}/metrics`, {
      headers: { authorization: gateway.authorization },
    });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
    const sessions = /^voxgate_media_sessions(?:\{[^}]*\})? (\S+)$/m.exec(body)?.[1];
    return {
      inbound: readHistogram(body, INBOUND_LATENCY),
      playout: readHistogram(body, PLAYOUT_LATENCY),
      mediaSessions: sessions === undefined ? null : Number(sessions),
    };
  } catch {
    return { inbound: null, playout: null, mediaSessions: null };
  }
}

const ms = (seconds: number) => Math.round(seconds * 1e5) / 100;

/** What one histogram observed between two readings, in ms; null when the gateway lacks it. */
export function latencyBetween(
  before: Histogram | null,
  after: Histogram | null,
  withinMs: number,
): LatencyFigures | null {
  if (!after) return null;
  const delta = histogramDelta(before, after);
  const total = delta.counts.at(-1) ?? 0;
  const at = delta.bounds.indexOf(withinMs / 1000);
  const p50 = histogramQuantile(delta, 0.5);
  const p99 = histogramQuantile(delta, 0.99);
  return {
    p50Ms: p50 ? ms(p50.value) : null,
    p99Ms: p99 ? ms(p99.value) : null,
    meanMs: delta.count > 0 ? ms(delta.sum / delta.count) : null,
    observations: delta.count,
    p99AboveHighestBucket: p99?.aboveHighestBound ?? false,
    withinPercent:
      at === -1 || total === 0 ? null : Math.round((delta.counts[at]! / total) * 10_000) / 100,
    withinMs,
  };
}

/** The machine's UDP counters (/proc/net/snmp): datagrams the kernel dropped, all sockets. */
export function udpDrops(): { receiveBufferErrors: number; inErrors: number } {
  try {
    const rows = readFileSync('/proc/net/snmp', 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('Udp:'));
    const names = rows[0]?.split(/\s+/) ?? [];
    const values = rows[1]?.split(/\s+/).map(Number) ?? [];
    const value = (name: string) => values[names.indexOf(name)] ?? NaN;
    return { receiveBufferErrors: value('RcvbufErrors'), inErrors: value('InErrors') };
  } catch {
    return { receiveBufferErrors: NaN, inErrors: NaN };
  }
}
