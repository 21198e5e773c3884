import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { RedisClient } from '../state/redis-connection.js';
import { withinStoreDeadline } from '../state/store-deadline.js';

/** INCR the window's counter, starting the window at its first request; its count and TTL. */
const COUNT = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {current, redis.call('PTTL', KEYS[1])}`;

interface CountCommand {
  voxgateRateCount(key: string, windowMs: number): Promise<[number, number]>;
}

/**
 * The rate-limit counters on Redis, shared by the nodes, with the store's deadline: the
 * plugin's own Redis store waits for ioredis's command timeout, and a request let through a
 * limit that could not be counted (skipOnError) then waited for the store a second time,
 * answering its 503 twice as late as promised.
 */
export function redisRateStore(redis: RedisClient, prefix: string): FastifyRateLimitStoreCtor {
  redis.defineCommand('voxgateRateCount', { numberOfKeys: 1, lua: COUNT });
  const counter = redis as unknown as CountCommand;
  class RedisRateStore implements FastifyRateLimitStore {
    incr(
      key: string,
      callback: Parameters<FastifyRateLimitStore['incr']>[1],
      timeWindow: number,
    ): void {
      withinStoreDeadline(
        () => counter.voxgateRateCount(prefix + key, timeWindow),
        undefined,
        redis,
      ).then(
        ([current, ttl]) => callback(null, { current, ttl }),
        (error: Error) => callback(error),
      );
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  }
  return RedisRateStore;
}
