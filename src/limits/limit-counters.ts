import type { RedisClient } from '../cluster/node-registry.js';
import { withinStoreDeadline } from '../state/store-deadline.js';

/** What runs at once under a limit: calls, or audio streams. */
export type ConcurrentKind = 'calls' | 'streams';
/** What is counted per second under a limit: calls placed, or messages sent. */
export type RateKind = 'calls_per_second' | 'messages_per_second';

/**
 * The counters behind the account limits, shared by every node that shares them: the members
 * running under a concurrency limit (a call's or a stream's id), and what was taken in the
 * current second under a rate limit. `scope` is the account the limit belongs to.
 */
export interface LimitCounters {
  /** Adds `member` unless `limit` members run already; true when it was added (or was in). */
  acquire(scope: string, kind: ConcurrentKind, member: string, limit: number): Promise<boolean>;
  release(scope: string, kind: ConcurrentKind, member: string): Promise<void>;
  /** Takes one of the second's `limit`: 0 when taken, else the ms until the next second. */
  take(scope: string, kind: RateKind, limit: number, now: number): Promise<number>;
}

const untilNextSecond = (now: number) => 1000 - (now % 1000);

/** The counters of one process (the embedded store: one node). */
export class MemoryLimitCounters implements LimitCounters {
  private readonly running = new Map<string, Set<string>>();
  private readonly seconds = new Map<string, { second: number; taken: number }>();

  async acquire(scope: string, kind: ConcurrentKind, member: string, limit: number) {
    const key = `${scope}:${kind}`;
    const members = this.running.get(key) ?? new Set<string>();
    if (!members.has(member) && members.size >= limit) return false;
    members.add(member);
    this.running.set(key, members);
    return true;
  }

  async release(scope: string, kind: ConcurrentKind, member: string) {
    const key = `${scope}:${kind}`;
    const members = this.running.get(key);
    members?.delete(member);
    if (members?.size === 0) this.running.delete(key);
  }

  async take(scope: string, kind: RateKind, limit: number, now: number) {
    const key = `${scope}:${kind}`;
    const second = Math.floor(now / 1000);
    const current = this.seconds.get(key);
    const taken = current?.second === second ? current.taken : 0;
    if (taken >= limit) return untilNextSecond(now);
    this.seconds.set(key, { second, taken: taken + 1 });
    return 0;
  }
}

/** SADD unless the set holds `limit` members already (a member already in stays in). */
const ACQUIRE = `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1`;

/** INCR the second's counter unless it reached `limit`; it expires after two seconds. */
const TAKE = `
local taken = tonumber(redis.call('GET', KEYS[1]) or '0')
if taken >= tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], 2000)
return 1`;

/**
 * The counters on Redis, so that every node counts against the same limit: a set of members
 * per account and kind, and a counter per account, kind and second. Each account's keys share
 * a hash slot (`{limits:<account>}`), and each check is one script on one key, atomic on a
 * Redis Cluster as on one server. The node that dies with members in a set has them released
 * by the node that closes its calls (NodeReaper).
 */
export class RedisLimitCounters implements LimitCounters {
  constructor(private readonly redis: RedisClient) {}

  async acquire(scope: string, kind: ConcurrentKind, member: string, limit: number) {
    const added = await withinStoreDeadline(
      () => this.redis.eval(ACQUIRE, 1, runningKey(scope, kind), member, limit),
      undefined,
      this.redis,
    );
    return added === 1;
  }

  async release(scope: string, kind: ConcurrentKind, member: string) {
    await withinStoreDeadline(
      () => this.redis.srem(runningKey(scope, kind), member),
      undefined,
      this.redis,
    );
  }

  async take(scope: string, kind: RateKind, limit: number, now: number) {
    const second = Math.floor(now / 1000);
    const taken = await withinStoreDeadline(
      () => this.redis.eval(TAKE, 1, `voxgate:{limits:${scope}}:${kind}:${second}`, limit),
      undefined,
      this.redis,
    );
    return taken === 1 ? 0 : untilNextSecond(now);
  }
}

const runningKey = (scope: string, kind: ConcurrentKind) => `voxgate:{limits:${scope}}:${kind}`;
