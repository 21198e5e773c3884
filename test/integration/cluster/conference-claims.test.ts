import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConferenceClaims } from '../../../src/cluster/conference-claims.js';
import { DEFAULT_HEARTBEAT_SETTINGS } from '../../../src/cluster/heartbeat-settings.js';
import { StoreUnavailable } from '../../../src/core/errors.js';
import { openRedis, type RedisClient } from '../../../src/state/redis-connection.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';

/**
 * A conference room opened while Redis did not answer: it opens on its node unclaimed, and the
 * node's next renewal that reaches Redis claims it, so a member reaching another node from then
 * on is refused instead of opening a second room of that name.
 */
let redis: RedisServer;
let client: RedisClient;
let reader: Redis;
const warnings: string[] = [];

beforeAll(async () => {
  redis = await startRedis();
  client = openRedis({ kind: 'server', url: redis.url }, { purpose: 'store', timeoutMs: 500 });
  reader = new Redis(redis.url);
  // Refused connections while the server is down are what the test is about.
  client.on('error', () => undefined);
  reader.on('error', () => undefined);
});

afterAll(async () => {
  client.disconnect();
  reader.disconnect();
  await redis.stop();
});

const claimsOf = (node: string, alive: Set<string>) =>
  new ConferenceClaims({
    redis: client,
    node,
    heartbeat: DEFAULT_HEARTBEAT_SETTINGS,
    isAlive: (other) => Promise.resolve(alive.has(other)),
    log: { warn: (_fields, message) => warnings.push(message) },
  });

describe('the claim of a conference room opened while Redis was away', () => {
  it('is made by the first renewal once Redis is back, and refuses the other node then', async () => {
    const alive = new Set(['node-a', 'node-b']);
    const a = claimsOf('node-a', alive);
    const b = claimsOf('node-b', alive);
    await redis.kill();
    await expect(a.claim('MA1', 'standup', 'room-1')).rejects.toBeInstanceOf(StoreUnavailable);
    // Renewals while Redis is still away fail, and keep the wish.
    await expect(a.renew()).rejects.toBeInstanceOf(StoreUnavailable);

    await redis.restart();
    await expect
      .poll(async () => {
        await a.renew().catch(() => undefined);
        return reader.get('voxgate:conference-room:MA1:standup').catch(() => null);
      })
      .toBe('node-a room-1');
    expect(await reader.pttl('voxgate:conference-room:MA1:standup')).toBeGreaterThan(0);
    expect(await b.claim('MA1', 'standup', 'room-2')).toEqual({ held: false, node: 'node-a' });
    expect(await b.holder('MA1', 'standup')).toBe('node-a');

    // Closed, it is released as any other claim.
    await a.release('MA1', 'standup', 'room-1');
    expect(await reader.get('voxgate:conference-room:MA1:standup')).toBeNull();
    await a.renew();
    expect(await reader.get('voxgate:conference-room:MA1:standup')).toBeNull();
    expect(warnings).toEqual([]);
  });

  it('is let go with a warning when another node claimed the name meanwhile', async () => {
    const alive = new Set(['node-a', 'node-b']);
    const a = claimsOf('node-a', alive);
    const b = claimsOf('node-b', alive);
    await redis.kill();
    await expect(a.claim('MA1', 'retro', 'room-3')).rejects.toBeInstanceOf(StoreUnavailable);
    await redis.restart();
    await expect
      .poll(() => b.claim('MA1', 'retro', 'room-4').catch(() => null))
      .toEqual({ held: true });
    await a.renew();
    expect(await reader.get('voxgate:conference-room:MA1:retro')).toBe('node-b room-4');
    expect(warnings).toEqual([
      'a conference room of this node is claimed by another node: it is open on both',
    ]);
  });
});
