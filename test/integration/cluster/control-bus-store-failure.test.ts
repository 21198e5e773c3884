import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ControlBus, ControlTimeout } from '../../../src/cluster/control-bus.js';
import { StoreUnavailable } from '../../../src/core/errors.js';
import { systemScheduler } from '../../../src/core/scheduler.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { until } from '../../support/wait.js';

/**
 * A node that receives a control request from a sender it has not seen asks Redis whether that
 * sender is alive. When the store fails that question (it hangs, it is gone), the request is
 * dropped and logged, and its sender hears a timeout: no rejection goes unobserved (one ended
 * the process).
 */
let redis: RedisServer;
const clients: Redis[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  redis = await startRedis();
});

afterAll(async () => {
  for (const client of clients) client.disconnect();
  await redis.stop();
  process.off('unhandledRejection', onUnhandled);
});

function bus(node: string, isAlive: (id: string) => Promise<boolean>) {
  const client = new Redis(redis.url);
  const subscriber = new Redis(redis.url);
  clients.push(client, subscriber);
  const warnings: string[] = [];
  const made = new ControlBus({
    node,
    redis: client,
    subscriber,
    secret: Buffer.from('a secret the nodes share'),
    timeoutMs: 500,
    scheduler: systemScheduler,
    isAlive,
    log: { warn: (_object, message) => warnings.push(message) },
  });
  return { bus: made, warnings };
}

it('drops a request whose sender the store cannot vouch for, and its sender hears a timeout', async () => {
  const asker = bus('asker', async () => true);
  const asked = bus('asked', async () => {
    throw new StoreUnavailable('no answer from Redis within 3000 ms');
  });
  let ran = 0;
  asked.bus.handle('ping', async () => ++ran);
  await asker.bus.start();
  await asked.bus.start();

  await expect(asker.bus.call('asked', 'ping', [])).rejects.toBeInstanceOf(ControlTimeout);
  await until(() => asked.warnings.includes('control message dropped'), 2000);
  expect(ran).toBe(0);
  expect(unhandled).toEqual([]);
  await asker.bus.stop();
  await asked.bus.stop();
});
