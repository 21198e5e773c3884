import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hangUpAllCalls, answeredCallUuid, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp, expectValidSignatures } from '../../support/client-app.js';
import { TEST_HEARTBEAT_ENV } from '../../support/cluster-heartbeat.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import type { RtpPeer } from '../../support/rtp-peer.js';
import type { SippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/**
 * Redis wiped under a running gateway (flushed, or restarted empty with no persistence): the
 * main account, with the credentials the gateway was started with, its node's registration and
 * its call in progress come back within seconds, without restarting the gateway. The node has
 * the cluster tests' faster heartbeat: what Redis lost comes back at its next beats.
 */
const NODE = 'node-w';
const entryKey = (uuid: string) => `voxgate:live-call:${uuid}`;

let redis: RedisServer;
let app: ClientApp;
let gw: TestGateway;
let watcher: Redis;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  [redis, app] = await Promise.all([startRedis(), ClientApp.start()]);
  watcher = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  watcher.on('error', () => {}); // while the server restarts
  // No VOXGATE_AUTH_ID: the main account is generated, and found again by its marker.
  gw = await startGateway({
    redisUrl: redis.url,
    listen: true,
    env: { VOXGATE_NODE_ID: NODE, ...TEST_HEARTBEAT_ENV },
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all(carriers.map((c) => c.stop()));
  await Promise.all(peers.map((p) => p.close()));
  watcher?.disconnect();
  await app?.close();
  await redis?.stop();
});

const account = () => gw.request('GET', `/v1/Account/${gw.main.id}/`);
const peerIds = async () => {
  const health = await gw.gateway.app.inject({ method: 'GET', url: '/health' });
  return ((health.json().peers ?? []) as { id: string }[]).map((p) => p.id);
};

/** Waits for what a wiped Redis lost to be back: the account, the node, the call's entry. */
async function expectRestored(callUuid: string): Promise<void> {
  // Answered as the main account, with the token the gateway was started with.
  await until(async () => (await account()).status === 200, 5000);
  expect((await account()).body).toMatchObject({ auth_id: gw.main.id, name: 'main' });
  await until(async () => (await peerIds()).includes(NODE), 5000);
  await until(async () => (await watcher.exists(entryKey(callUuid))) === 1, 5000);
  // The marker a later start finds the generated account by.
  const marker = await watcher.get('vg:{global}:d:marker:main-account');
  expect(JSON.parse(marker!)).toEqual({ auth_id: gw.main.id });
}

describe('a wiped Redis', () => {
  it('gets the main account, the node and its call back, flushed or restarted empty', async () => {
    expect((await account()).status).toBe(200);
    const placed = await placeCarrierCall(
      { gw, app, carriers, peers },
      '<Response><Wait length="60"/></Response>',
      { hangup_url: `${app.baseUrl}/hangup` },
    );
    const callUuid = await answeredCallUuid(app, placed.requestUuid);
    await until(async () => (await watcher.exists(entryKey(callUuid))) === 1, 5000);

    // Flushed and counted in one transaction: the node beats on, and a beat may land right
    // after the flush.
    const flushed = await watcher.multi().flushall().dbsize().exec();
    expect(flushed?.[1]).toEqual([null, 0]);
    await expectRestored(callUuid);

    await redis.restart();
    await until(async () => (await watcher.ping().catch(() => null)) === 'PONG', 5000);
    await expectRestored(callUuid);

    // The call ends as calls do: its record is kept and its hangup callback sent, signed with
    // the restored account's token.
    await hangUpAllCalls([gw]);
    await until(() => app.requestsTo('/hangup').length === 1, 5000);
    const hangup = app.requestsTo('/hangup')[0]!;
    expect(hangup.params).toMatchObject({ CallUUID: callUuid, HangupCauseCode: '4000' });
    expectValidSignatures(hangup, { accountToken: gw.main.token, mainToken: gw.main.token });
    const record = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${callUuid}/`);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({ call_uuid: callUuid, hangup_cause_code: 4000 });
    await until(async () => (await watcher.exists(entryKey(callUuid))) === 0, 5000);
  }, 60_000);
});
