import type { Cluster, Redis } from 'ioredis';
import type { Scheduler, TimerHandle } from '../core/scheduler.js';
import { withinStoreDeadline } from '../state/store-deadline.js';
import type { HeartbeatSettings } from './heartbeat-settings.js';

/** A Redis connection: one server, or a cluster. */
export type RedisClient = Redis | Cluster;

/** What a node tells its peers about itself, every heartbeat. */
export interface NodeInfo {
  id: string;
  /** Where its SIP listens (public host and UDP port), for operators and the proxy. */
  sip: string;
  /** Its REST API (host:port). */
  http: string;
  state: 'active' | 'draining';
  /** Calls in progress on it: outbound calls go to the least loaded active node. */
  calls: number;
  /** Its SMPP binds and their state: each node binds to the SMSCs itself. */
  binds: { carrier: string; bind: number; state: string }[];
  startedAt: number;
  /** Epoch ms of its last heartbeat. */
  heartbeatAt: number;
}

/** Both keys share one hash slot ({cluster}), so they live on one Redis Cluster master. */
const HEARTBEATS = 'voxgate:{cluster}:heartbeats';
const INFO = 'voxgate:{cluster}:nodes';

/**
 * The gateway nodes that share one Redis: each writes its heartbeat (a score in a sorted set,
 * its description in a hash) every heartbeat interval; a node whose last beat is older than
 * the node time to live is dead (heartbeat-settings.ts). A node that stops cleanly leaves at
 * once.
 */
export class NodeRegistry {
  private timer: TimerHandle | null = null;
  private stopped = false;
  /** The peers' last heartbeats as read at this node's own last beat. */
  private seen = new Map<string, number>();
  /** Since when this node's own beats have gone through promptly; null after one did not. */
  private steadySince: number | null = null;
  /** Whether a beat of this node has gone through (since it started or was forgotten). */
  private beaten = false;

  constructor(
    private readonly options: {
      redis: RedisClient;
      scheduler: Scheduler;
      /** How often this node beats, and how long a node may go without a beat. */
      heartbeat: HeartbeatSettings;
      describe: () => Omit<NodeInfo, 'heartbeatAt'>;
      /**
       * What the node keeps alive with its heartbeat (its calls' keys), done before each
       * scheduled beat. A failure is reported and the beat goes on: a node whose calls' keys
       * sit on a Redis master that is away is still alive.
       */
      beforeBeat?: () => Promise<void>;
      /** A beat found this node's registration gone: Redis restarted empty or was flushed. */
      onLost?: () => void;
      onError: (error: Error) => void;
    },
  ) {}

  get id(): string {
    return this.options.describe().id;
  }

  async start(): Promise<void> {
    await this.beat();
    this.schedule();
  }

  /** Leaves the registry: peers stop counting this node at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.forget(this.id);
  }

  async beat(): Promise<void> {
    const { redis, scheduler } = this.options;
    const info: NodeInfo = { ...this.options.describe(), heartbeatAt: scheduler.now() };
    let beats: string[];
    try {
      beats = await withinStoreDeadline(
        async () => {
          const added = await redis.hset(INFO, info.id, JSON.stringify(info));
          // A node that beat before and is new to the hash: what Redis held is gone.
          if (added === 1 && this.beaten) this.options.onLost?.();
          this.beaten = true;
          await redis.zadd(HEARTBEATS, info.heartbeatAt, info.id);
          return redis.zrangebyscore(HEARTBEATS, '-inf', '+inf', 'WITHSCORES');
        },
        undefined,
        this.options.redis,
      );
    } catch (error) {
      this.steadySince = null;
      throw error;
    }
    const now = scheduler.now();
    // A beat that waited for Redis (a failover, a restart) starts the count again.
    if (now - info.heartbeatAt > this.options.heartbeat.intervalMs) this.steadySince = null;
    this.steadySince ??= now;
    const seen = new Map<string, number>();
    for (let k = 0; k + 1 < beats.length; k += 2) seen.set(beats[k]!, Number(beats[k + 1]));
    this.seen = seen;
  }

  /**
   * Whether this node's own beats have gone through for long enough to judge the others' by
   * theirs. While Redis is away (a failover, a restart) no node beats, so once it is back every
   * last beat is old: a node that judged then would take live peers for dead and close their
   * calls. For the node time to live and one more beat after its own beats come through
   * again, it judges no one dead.
   */
  get steady(): boolean {
    const since = this.steadySince;
    const { intervalMs, nodeTtlMs } = this.options.heartbeat;
    return since !== null && this.options.scheduler.now() - since >= nodeTtlMs + intervalMs;
  }

  /** Every node whose heartbeat is recent, this one included. */
  async alive(): Promise<NodeInfo[]> {
    const since = this.options.scheduler.now() - this.options.heartbeat.nodeTtlMs;
    return withinStoreDeadline(
      async () => {
        const ids = await this.options.redis.zrangebyscore(HEARTBEATS, since, '+inf');
        return this.describe(ids);
      },
      undefined,
      this.options.redis,
    );
  }

  /** Nodes whose heartbeat stopped (not yet forgotten); none while this node is not steady. */
  async dead(): Promise<string[]> {
    if (!this.steady) return [];
    const before = this.options.scheduler.now() - this.options.heartbeat.nodeTtlMs;
    return withinStoreDeadline(
      () => this.options.redis.zrangebyscore(HEARTBEATS, '-inf', `(${before}`),
      undefined,
      this.options.redis,
    );
  }

  /**
   * Whether a node's heartbeat is recent: from what this node read at its last beat when that
   * says so (no Redis round trip on a control request), else from Redis (a node that has just
   * started, or one that looked dead a second ago). A node that beat at all is alive while this
   * node is not steady: it cannot tell then; one that never beat is not.
   */
  async isAlive(id: string): Promise<boolean> {
    const since = this.options.scheduler.now() - this.options.heartbeat.nodeTtlMs;
    const cached = this.seen.get(id);
    if (cached !== undefined && cached >= since) return true;
    const score = await withinStoreDeadline(
      () => this.options.redis.zscore(HEARTBEATS, id),
      undefined,
      this.options.redis,
    );
    if (score === null) return false;
    const beat = Number(score);
    if (beat < since) return !this.steady;
    // A peer that started after this node's last beat: its next requests need no round trip.
    this.seen.set(id, beat);
    return true;
  }

  /** Epoch ms of a node's last heartbeat, or null when it is not known. */
  async lastBeat(id: string): Promise<number | null> {
    const score = await withinStoreDeadline(
      () => this.options.redis.zscore(HEARTBEATS, id),
      undefined,
      this.options.redis,
    );
    return score === null ? null : Number(score);
  }

  async forget(id: string): Promise<void> {
    if (id === this.id) this.beaten = false;
    await withinStoreDeadline(
      async () => {
        await this.options.redis.zrem(HEARTBEATS, id);
        await this.options.redis.hdel(INFO, id);
      },
      undefined,
      this.options.redis,
    );
  }

  private async describe(ids: string[]): Promise<NodeInfo[]> {
    if (ids.length === 0) return [];
    const values = await this.options.redis.hmget(INFO, ...ids);
    return values.filter((v): v is string => v !== null).map((v) => JSON.parse(v) as NodeInfo);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.options.scheduler.after(this.options.heartbeat.intervalMs, () => {
      (this.options.beforeBeat?.() ?? Promise.resolve())
        .catch((error: Error) => this.options.onError(error))
        .then(() => this.beat())
        .catch((error: Error) => this.options.onError(error))
        .finally(() => this.schedule());
    });
  }
}
