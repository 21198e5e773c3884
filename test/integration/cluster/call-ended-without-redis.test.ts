import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answeredCallUuid, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import type { RtpPeer } from '../../support/rtp-peer.js';
import type { SippUas } from '../../support/sipp.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';
import { until } from '../../support/wait.js';

/**
 * A call that ends while its node cannot reach Redis leaves its keys there; its node removes
 * them once Redis answers again, so no peer finds the call later and bills it to the node's
 * death.
 */
const NODE = 'node-g';
const entryKey = (uuid: string) => `voxgate:live-call:${uuid}`;
const nodeKey = `voxgate:node-calls:${NODE}`;

let redis: RedisServer;
let proxy: TcpProxy;
let app: ClientApp;
let gw: TestGateway;
let watcher: Redis;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  [redis, app] = await Promise.all([startRedis(), ClientApp.start()]);
  proxy = await startTcpProxy(redis.port);
  watcher = new Redis(redis.url);
  gw = await startGateway({ redisUrl: proxy.url, listen: true, env: { VOXGATE_NODE_ID: NODE } });
});

afterAll(async () => {
  await proxy?.restore().catch(() => undefined);
  await gw?.close();
  await Promise.all(carriers.map((c) => c.stop()));
  await Promise.all(peers.map((p) => p.close()));
  await proxy?.close();
  watcher?.disconnect();
  await app?.close();
  await redis?.stop();
});

describe('a call that ends while its node cannot reach Redis', () => {
  it('has its keys removed by its node once Redis answers again', async () => {
    const placed = await placeCarrierCall(
      { gw, app, carriers, peers },
      '<Response><Wait length="3"/></Response>',
    );
    const uuid = await answeredCallUuid(app, placed.requestUuid);
    await until(async () => (await watcher.exists(entryKey(uuid))) === 1, 5000);

    // The node loses Redis; the call ends meanwhile (its Wait is over).
    await proxy.cut();
    await until(() => gw.gateway.calls.liveCount === 0, 15_000);
    // Its node tried to remove its keys, and could not.
    const reported = () =>
      gw.logs.some((line) => line.includes('the live call directory was not updated'));
    await until(reported, 10_000);
    // No time to live left to end them (as an older node wrote them): only their node can
    // remove them now.
    await watcher.persist(entryKey(uuid));
    await watcher.persist(nodeKey);
    // Longer than the client keeps a command for a connection that keeps failing: nothing
    // queued before goes out once Redis is back.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(await watcher.exists(entryKey(uuid))).toBe(1);
    expect(await watcher.smembers(nodeKey)).toEqual([uuid]);

    await proxy.restore();
    await until(async () => (await watcher.exists(entryKey(uuid), nodeKey)) === 0, 5000);
  }, 40_000);
});
