import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MemoryLimitCounters,
  RedisLimitCounters,
  type LimitCounters,
} from '../../../src/limits/limit-counters.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';

/** The same contract in memory (one node) and on a real Redis (nodes sharing it). */
let redis: RedisServer;
let client: Redis;

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
});

afterAll(async () => {
  client.disconnect();
  await redis.stop();
});

const kinds: [string, () => LimitCounters][] = [
  ['in memory', () => new MemoryLimitCounters()],
  ['on Redis', () => new RedisLimitCounters(client)],
];

describe.each(kinds)('limit counters %s', (name, make) => {
  it('admits members up to the limit, counts a member once, and frees a place on release', async () => {
    const counters = make();
    const scope = `acct-${name}-1`;
    expect(await counters.acquire(scope, 'calls', 'a', 2)).toBe(true);
    expect(await counters.acquire(scope, 'calls', 'a', 2)).toBe(true);
    expect(await counters.acquire(scope, 'calls', 'b', 2)).toBe(true);
    expect(await counters.acquire(scope, 'calls', 'c', 2)).toBe(false);
    // Another kind and another scope count apart.
    expect(await counters.acquire(scope, 'streams', 'c', 2)).toBe(true);
    expect(await counters.acquire(`${scope}-other`, 'calls', 'c', 2)).toBe(true);
    await counters.release(scope, 'calls', 'a');
    expect(await counters.acquire(scope, 'calls', 'c', 2)).toBe(true);
    expect(await counters.acquire(scope, 'calls', 'd', 2)).toBe(false);
  });

  it("takes up to the limit in a second and says how long until the next one's", async () => {
    const counters = make();
    const scope = `acct-${name}-2`;
    const second = Math.floor(Date.now() / 1000) * 1000 + 5000;
    expect(await counters.take(scope, 'messages_per_second', 2, second + 100)).toBe(0);
    expect(await counters.take(scope, 'messages_per_second', 2, second + 200)).toBe(0);
    expect(await counters.take(scope, 'messages_per_second', 2, second + 300)).toBe(700);
    expect(await counters.take(scope, 'calls_per_second', 2, second + 300)).toBe(0);
    expect(await counters.take(scope, 'messages_per_second', 2, second + 1000)).toBe(0);
  });
});
