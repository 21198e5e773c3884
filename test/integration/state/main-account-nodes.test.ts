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
  const states = Array.from({ length: 4 }, () => {
    const store = RedisStore.connect(redis.url);
    stores.push(store);
    return createState(store, secrets);
  });
  // Rounds of four nodes on a new account each: a node's claim of the auth id and its write of
  // the account are two commands, and some rounds find another node between them.
  for (let round = 0; round < 25; round++) {
    const main = {
      authId: `MA${String(round).padStart(2, '0')}TOGETHERTOGETHAB`,
      authToken: 't'.repeat(40),
    };
    const started = await Promise.allSettled(
      states.map((state) => ensureMainAccount(state, systemClock, main)),
    );
    const reasons = started.map((outcome) =>
      outcome.status === 'rejected' ? String(outcome.reason) : outcome.value.authId,
    );
    expect(reasons, `round ${round}`).toEqual(states.map(() => main.authId));
    const stored = await states[0]!.accounts.get(main.authId, main.authId);
    expect(stored).toMatchObject({
      auth_id: main.authId,
      auth_token: main.authToken,
      subaccount: null,
    });
  }
});
