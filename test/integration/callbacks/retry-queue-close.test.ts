import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BullMqRetryQueue } from '../../../src/callbacks/bullmq-retry-queue.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';

describe('BullMQ retry queue close', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('returns within its grace period when Redis stops answering, and says so', async () => {
    const errors: string[] = [];
    const queue = new BullMqRetryQueue<{ n: number }>({
      redisUrl: redis.url,
      queueName: 'close-test',
      onError: (error) => errors.push(error.message),
    });
    queue.start(async () => undefined);
    await queue.schedule({ n: 1 }, 0);
    const admin = new Redis(redis.url);
    // Connected, but nothing answers for 10 s: a graceful close would wait for all of it.
    await admin.call('CLIENT', 'PAUSE', '10000', 'ALL');
    const started = Date.now();
    await queue.close();
    const took = Date.now() - started;
    admin.disconnect();
    expect(took).toBeLessThan(8000);
    expect(errors).toContainEqual(expect.stringMatching(/did not close within 5000 ms/));
  }, 30_000);
});
