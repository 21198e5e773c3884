import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../../src/core/clock.js';
import { ensureMainAccount } from '../../../src/state/main-account.js';
import { RedisStore } from '../../../src/state/redis-store.js';
import { SecretBox } from '../../../src/state/secret-box.js';
import { createState } from '../../../src/state/state.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';

/**
 * Nodes of one cluster start at once on an empty Redis, each configured with the same main
 * account (VOXGATE_AUTH_ID and VOXGATE_AUTH_TOKEN): each finds it missing and creates it, and
 * all but the first find it taken. Every node must start, on that one account.
 */
let redis: RedisServer;
const stores: RedisStore[] = [];

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  for (const store of stores) await store.close();
  await redis.stop();
});

it('lets nodes that start together on an empty Redis all take the configured main account', async () => {
  const secrets = SecretBox.random();
  const main = { authId: 'MA' + 'TOGETHER'.repeat(2) + 'AB', authToken: 't'.repeat(40) };
  const states = Array.from({ length: 3 }, () => {
    const store = RedisStore.connect(redis.url);
    stores.push(store);
    return createState(store, secrets);
  });
  const started = await Promise.allSettled(
    states.map((state) => ensureMainAccount(state, systemClock, main)),
  );
  expect(started.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
  for (const outcome of started) {
    if (outcome.status === 'fulfilled') expect(outcome.value.authId).toBe(main.authId);
  }
  const stored = await states[0]!.accounts.get(main.authId, main.authId);
  expect(stored).toMatchObject({
    auth_id: main.authId,
    auth_token: main.authToken,
    subaccount: null,
  });
});
