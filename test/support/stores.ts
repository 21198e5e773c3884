import { afterAll, beforeAll, describe } from 'vitest';
import { startRedis, type RedisServer } from './redis-server.js';

export interface StoreTarget {
  name: 'embedded' | 'redis';
  /** The Redis URL for the redis target (valid inside tests); undefined for embedded. */
  redisUrl(): string | undefined;
  /** Empties the store between tests (a no-op on embedded, where each gateway starts empty). */
  flush(): Promise<void>;
}

/** Runs the same suite on the embedded store and on a real redis-server. */
export function describeEachStore(title: string, suite: (target: StoreTarget) => void): void {
  describe(`${title} (embedded store)`, () => {
    suite({ name: 'embedded', redisUrl: () => undefined, flush: async () => {} });
  });
  describe(`${title} (redis)`, () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis?.stop();
    });
    suite({ name: 'redis', redisUrl: () => redis.url, flush: () => redis.flush() });
  });
}
