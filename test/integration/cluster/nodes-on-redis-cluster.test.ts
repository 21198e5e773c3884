import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { answeredCallUuid, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedisCluster, type RedisCluster } from '../../support/redis-cluster.js';
import type { RtpPeer } from '../../support/rtp-peer.js';
import type { SippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/**
 * The nodes' own machinery (heartbeats, the live call directory, the signed pub/sub control
 * requests) on a Redis Cluster of three masters, as on one server: a node sees its peer, and a
 * call one node runs is listed and hung up through the other.
 */
let cluster: RedisCluster;
let a: TestGateway;
let b: TestGateway;
let app: ClientApp;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
  app = await ClientApp.start();
  a = await startGateway({ redisUrl: cluster.url, listen: true, env: { VOXGATE_NODE_ID: 'rc-a' } });
  b = await startGateway({ redisUrl: cluster.url, listen: true, env: { VOXGATE_NODE_ID: 'rc-b' } });
}, 60_000);

afterEach(async () => {
  await Promise.all(carriers.splice(0).map((c) => c.stop()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await app?.close();
  await cluster?.stop();
});

it('sees its peer and hangs up a call the other node runs', async () => {
  const health = async () =>
    (await b.gateway.app.inject({ method: 'GET', url: '/health' })).json() as {
      peers: { id: string }[];
    };
  await until(async () => (await health()).peers.length === 2, 5000);
  const placed = await placeCarrierCall(
    { gw: a, app, carriers, peers },
    '<Response><Wait length="30"/></Response>',
    { hangup_url: `${app.baseUrl}/hangup` },
  );
  const uuid = await answeredCallUuid(app, placed.requestUuid);
  expect(a.gateway.calls.runs(uuid)).toBe(true);
  const v1 = `/v1/Account/${b.main.id}`;
  expect((await b.request('GET', `${v1}/Call/?status=live`)).body.calls).toEqual([uuid]);
  expect((await b.request('DELETE', `${v1}/Call/${uuid}/`)).status).toBe(204);
  await until(() => app.requestsTo('/hangup').length > 0, 5000);
  expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
    CallUUID: uuid,
    HangupSource: 'API Request',
  });
});
