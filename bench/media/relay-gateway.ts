import type { DtlsCertificate } from '../../src/media/dtls/dtls-certificate.js';
import type { MediaSessionSpec } from '../../src/media/pipeline/session-spec.js';
import { MediaWorkerPool } from '../../src/media/worker/media-worker-pool.js';
import type { Results } from '../../src/media/worker/protocol.js';
import { processCpuSeconds } from '../api/process-cpu.js';
import {
  threadCpuSeconds,
  threadIds,
  threadPreemptions,
  threadsCpuSeconds,
} from './relay-threads.js';

const PCMU = { encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const };
const EVENTS = { payloadType: 101, rate: 8000 };
/** Sessions opened or asked for stats at once. */
const CONCURRENCY = 100;

export const legSpec = (
  remotePort: number,
  extra: Partial<MediaSessionSpec> = {},
): MediaSessionSpec => ({
  formats: [PCMU],
  telephoneEvent: EVENTS,
  remote: { address: '127.0.0.1', port: remotePort },
  ...extra,
});

/** One bridged call: leg a and leg b, on the same worker. */
export interface Pair {
  a: string;
  b: string;
  aPort: number;
  bPort: number;
}

/** Packets sent and received, summed over some sessions. */
export interface SessionTotals {
  packetsSent: number;
  packetsReceived: number;
}

async function inBatches<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += CONCURRENCY) {
    out.push(...(await Promise.all(items.slice(i, i + CONCURRENCY).map(work))));
  }
  return out;
}

/**
 * A one-worker media pool in this process, with the OS threads it started, so that the
 * worker's own CPU can be read from /proc apart from the main thread's.
 */
export class Gateway {
  private sessions: string[] = [];
  private created = 0;

  private constructor(
    readonly pool: MediaWorkerPool,
    /** Threads that appeared with the pool: the worker, and any helper it started. */
    readonly threads: number[],
    /** The first warnings the worker raised (socket errors, failed ticks). */
    readonly warnings: string[],
  ) {}

  /** The worker's DTLS certificate's a=fingerprint, when it has one. */
  certificateFingerprint: string | null = null;

  static async start(
    ports: { min: number; max: number },
    dtls?: { certificate: DtlsCertificate; handshakeTimeoutMs: number },
  ): Promise<Gateway> {
    const before = new Set(threadIds());
    const warnings: string[] = [];
    const pool = new MediaWorkerPool(
      {
        onEvent: (_id, event) => {
          if (event.type === 'warning' && warnings.length < 20) warnings.push(event.message);
        },
      },
      {
        size: 1,
        settings: {
          ...{ rtpPorts: ports, rtpHost: '127.0.0.1', cname: 'bench-relay' },
          ...(dtls && { dtls }),
        },
      },
    );
    await pool.stats();
    const gateway = new Gateway(
      pool,
      threadIds().filter((tid) => !before.has(tid)),
      warnings,
    );
    gateway.certificateFingerprint = dtls?.certificate.sdpFingerprint ?? null;
    return gateway;
  }

  /** CPU seconds of the threads the pool started so far. */
  workerThreadCpuSeconds(): number {
    return threadsCpuSeconds(this.threads);
  }

  /**
   * CPU seconds of every thread but the main one: the worker, and V8's and libuv's helper
   * threads, which do the worker's concurrent GC (the main thread, holding only the pool,
   * gives them next to nothing to do).
   */
  offMainCpuSeconds(): number {
    return processCpuSeconds(process.pid) - threadCpuSeconds(process.pid);
  }

  /** Times the pool's threads were preempted so far. */
  workerPreemptions(): number {
    return this.threads.reduce((n, tid) => n + (threadPreemptions(tid) || 0), 0);
  }

  /** Each worker thread's CPU so far, by thread id. */
  threadCpu(): Record<string, number> {
    return Object.fromEntries(this.threads.map((tid) => [tid, threadCpuSeconds(tid)]));
  }

  /** CPU seconds of this process's main thread so far. */
  mainThreadCpuSeconds(): number {
    return threadCpuSeconds(process.pid);
  }

  async open(spec: MediaSessionSpec): Promise<{ id: string; port: number }> {
    const id = `s${++this.created}`;
    const near = this.sessions[0];
    const { port } = await this.pool.createSession(id, spec, near ? { near } : {});
    this.sessions.push(id);
    return { id, port };
  }

  openMany(specs: readonly MediaSessionSpec[]): Promise<Array<{ id: string; port: number }>> {
    return inBatches(specs, (spec) => this.open(spec));
  }

  /** Bridges legs two by two (0 with 1, 2 with 3...) in `mode`. */
  async bridge(
    legs: ReadonlyArray<{ id: string; port: number }>,
    mode: 'relay' | 'mix',
  ): Promise<Pair[]> {
    const pairs = Array.from({ length: Math.floor(legs.length / 2) }, (_, i) => ({
      a: legs[2 * i]!.id,
      b: legs[2 * i + 1]!.id,
      aPort: legs[2 * i]!.port,
      bPort: legs[2 * i + 1]!.port,
    }));
    await inBatches(pairs, (p) =>
      this.pool.send({ type: 'bridge', sessionId: p.a, peerId: p.b, mode }),
    );
    return pairs;
  }

  /** Closes one leg. */
  async destroy(id: string): Promise<void> {
    this.sessions = this.sessions.filter((s) => s !== id);
    await this.pool.destroySession(id);
  }

  async totals(ids: readonly string[]): Promise<SessionTotals> {
    const stats = await inBatches(ids, (sessionId) =>
      this.pool.send({ type: 'sessionStats', sessionId }),
    );
    return {
      packetsSent: stats.reduce((n, s) => n + s.packetsSent, 0),
      packetsReceived: stats.reduce((n, s) => n + s.packetsReceived, 0),
    };
  }

  async memory(): Promise<Results['stats']> {
    return (await this.pool.stats())[0]!;
  }

  async destroyAll(): Promise<void> {
    const ids = this.sessions.splice(0);
    await inBatches(ids, (id) => this.pool.destroySession(id));
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
