import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { answeredCallUuid, hangUpAllCalls, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedisCluster, type RedisCluster } from '../../support/redis-cluster.js';
import { startRedisSentinelSet, type RedisSentinelSet } from '../../support/redis-sentinel.js';
import type { RtpPeer } from '../../support/rtp-peer.js';
import type { SippUas } from '../../support/sipp.js';
import { sleep, until } from '../../support/wait.js';

/**
 * The nodes' own machinery (heartbeats, the live call directory, the signed pub/sub control
 * requests) on a Redis Cluster of three masters and on a Sentinel set, as on one server: a
 * node sees its peer, and a call one node runs is listed and hung up through the other; on
 * Sentinel, still after the master failed over (the nodes' subscriptions follow it).
 */
let app: ClientApp;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  app = await ClientApp.start();
});

afterEach(async () => {
  await Promise.all(carriers.splice(0).map((c) => c.stop()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
  app.reset();
});

afterAll(async () => {
  await app?.close();
});

/** Two nodes on `url`, `a` and `b` once each sees the other. */
async function twoNodes(url: string, prefix: string): Promise<[TestGateway, TestGateway]> {
  const a = await startGateway({
    redisUrl: url,
    listen: true,
    env: { VOXGATE_NODE_ID: `${prefix}-a` },
  });
  const b = await startGateway({
    redisUrl: url,
    listen: true,
    env: { VOXGATE_NODE_ID: `${prefix}-b` },
  });
  for (const gw of [a, b]) {
    const health = async () =>
      (await gw.gateway.app.inject({ method: 'GET', url: '/health' })).json() as {
        peers: { id: string }[];
      };
    await until(async () => (await health()).peers.length === 2, 5000);
  }
  return [a, b];
}

/**
 * A call `a` runs is listed and hung up through `b`: the hangup callback says so. `settleMs`:
 * how long `b` may take to list it (a node whose subscription is still coming back after a
 * failover is left out of a listing until it answers again).
 */
async function hangUpThroughTheOther(a: TestGateway, b: TestGateway, settleMs = 0): Promise<void> {
  const placed = await placeCarrierCall(
    { gw: a, app, carriers, peers },
    '<Response><Wait length="30"/></Response>',
    { hangup_url: `${app.baseUrl}/hangup` },
  );
  const uuid = await answeredCallUuid(app, placed.requestUuid);
  expect(a.gateway.calls.runs(uuid)).toBe(true);
  const v1 = `/v1/Account/${b.main.id}`;
  const listed = async () => (await b.request('GET', `${v1}/Call/?status=live`)).body.calls;
  // Right after a failover a listing may still answer 503 (Redis unavailable), or leave out
  // the node whose subscription is coming back: not yet.
  let calls = await listed();
  if (settleMs > 0) await until(async () => ((calls = await listed()) ?? []).length > 0, settleMs);
  expect(calls).toEqual([uuid]);
  // A 503 says "try again" (the owner did not answer in time, or the store was away), and a
  // client does: on a Redis Cluster just made, the first request between the nodes has taken
  // over 2 s once in a while. The retry finds the call hung up (204), or already gone (404)
  // when the first request reached the owner late; the hangup callback below says which.
  const answers: { status: number; body: unknown }[] = [];
  const hangUp = async () => {
    const deleted = await b.request('DELETE', `${v1}/Call/${uuid}/`);
    answers.push({ status: deleted.status, body: deleted.body });
  };
  await hangUp();
  if (answers[0]!.status === 503) {
    await sleep(2000);
    await hangUp();
  }
  const settled = answers.length === 1 ? [204] : [204, 404];
  expect(settled, JSON.stringify(answers)).toContain(answers.at(-1)!.status);
  await until(() => app.requestsTo('/hangup').length > 0, 10_000);
  expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
    CallUUID: uuid,
    HangupSource: 'API Request',
  });
}

describe('nodes on a Redis Cluster of three masters', () => {
  let cluster: RedisCluster;
  let nodes: TestGateway[] = [];
  beforeAll(async () => {
    cluster = await startRedisCluster();
    nodes = await twoNodes(cluster.url, 'rc');
  }, 60_000);
  afterEach(() => hangUpAllCalls(nodes));
  afterAll(async () => {
    for (const gw of nodes) await gw.close();
    await cluster?.stop();
  });

  it('see each other and hang up a call the other node runs', async () => {
    await hangUpThroughTheOther(nodes[0]!, nodes[1]!);
  });
});

describe('nodes on Redis Sentinel (one master, one replica, three Sentinels)', () => {
  let set: RedisSentinelSet;
  let nodes: TestGateway[] = [];
  beforeAll(async () => {
    set = await startRedisSentinelSet();
    nodes = await twoNodes(set.url, 'rs');
  }, 60_000);
  afterEach(() => hangUpAllCalls(nodes));
  afterAll(async () => {
    try {
      for (const gw of nodes) await gw.close();
    } finally {
      await set?.stop();
    }
  });

  it('see each other and hang up a call the other node runs, before and after a failover', async () => {
    const [a, b] = nodes as [TestGateway, TestGateway];
    await hangUpThroughTheOther(a, b);
    app.reset();
    const before = await set.currentMasterPort();
    await set.master.kill();
    await until(async () => (await set.currentMasterPort()) !== before, 15_000);
    // Both nodes are back on the promoted replica: each sees the other's heartbeat again.
    await until(async () => {
      const res = await b.gateway.app.inject({ method: 'GET', url: '/health' });
      // While Redis is away /health says so and lists no peers.
      return res.statusCode === 200 && (res.json() as { peers?: unknown[] }).peers?.length === 2;
    }, 15_000);
    await hangUpThroughTheOther(b, a, 10_000);
  }, 60_000);
});
