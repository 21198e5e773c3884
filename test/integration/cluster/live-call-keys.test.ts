import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveCallTtlMs } from '../../../src/cluster/live-call-directory.js';
import { recordTimeMs } from '../../../src/state/state.js';
import { answeredCallUuid, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp, expectValidSignatures } from '../../support/client-app.js';
import { TEST_HEARTBEAT, TEST_HEARTBEAT_ENV } from '../../support/cluster-heartbeat.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { spawnGateway, type GatewayProcess, processApi } from '../../support/gateway-process.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import type { RtpPeer } from '../../support/rtp-peer.js';
import type { SippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/**
 * What a call in progress keeps in Redis lives only as long as its node refreshes it, and a
 * call whose node died is billed up to the node's last heartbeat, not to when a peer closed it.
 * Both nodes have the cluster tests' faster heartbeat, which the keys' time to live follows.
 */
const LIVE_CALL_TTL_MS = liveCallTtlMs(TEST_HEARTBEAT);
const MAIN = { id: 'MA' + 'T'.repeat(18), token: 'L'.repeat(40) };
const HEARTBEATS = 'voxgate:{cluster}:heartbeats';
const entryKey = (uuid: string) => `voxgate:live-call:${uuid}`;
const nodeKey = (node: string) => `voxgate:node-calls:${node}`;
const v1 = `/v1/Account/${MAIN.id}`;

let redis: RedisServer;
let client: Redis;
let app: ClientApp;
let a: TestGateway;
let d: GatewayProcess | null = null;
/**
 * Node D, the node that dies in the second test, spawned with node A: its start (a process of
 * its own, seconds) overlaps the first test, which waits out a time to live. A call placed on A
 * while both are idle stays on A (a tie is placed on the node asked), as it did before D ran.
 */
let dSpawned: Promise<GatewayProcess>;
let dHealthy: Promise<void>;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  [redis, app] = await Promise.all([startRedis(), ClientApp.start()]);
  client = new Redis(redis.url);
  a = await startGateway({
    redisUrl: redis.url,
    listen: true,
    env: {
      VOXGATE_NODE_ID: 'node-a',
      VOXGATE_AUTH_ID: MAIN.id,
      VOXGATE_AUTH_TOKEN: MAIN.token,
      ...TEST_HEARTBEAT_ENV,
    },
  });
  dSpawned = spawnGateway({
    VOXGATE_REDIS_URL: redis.url,
    VOXGATE_NODE_ID: 'node-d',
    VOXGATE_AUTH_ID: MAIN.id,
    VOXGATE_AUTH_TOKEN: MAIN.token,
    VOXGATE_SIP_HOST: '127.0.0.1',
    VOXGATE_RTP_HOST: '127.0.0.1',
    VOXGATE_RATE_LIMIT: '0',
    ...TEST_HEARTBEAT_ENV,
  });
  dHealthy = dSpawned.then((spawned) => {
    d = spawned;
    return spawned.healthy();
  });
  // Awaited (and so reported) by the test that uses D.
  dHealthy.catch(() => undefined);
});

afterAll(async () => {
  d = (await dSpawned?.catch(() => null)) ?? d;
  if (d && d.child.exitCode === null) d.child.kill('SIGKILL');
  await Promise.all(carriers.map((c) => c.stop()));
  await Promise.all(peers.map((p) => p.close()));
  await a?.close();
  client?.disconnect();
  await app?.close();
  await redis?.stop();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The gateway process's REST API as the main account. */
const overHttp = (port: number): TestGateway => processApi(port, MAIN);

describe('a call in progress on Redis', () => {
  it('has keys with a time to live that its node refreshes while it lasts, removed at its end', async () => {
    const placed = await placeCarrierCall(
      { gw: a, app, carriers, peers },
      '<Response><Wait length="60"/></Response>',
    );
    const uuid = await answeredCallUuid(app, placed.requestUuid);
    await until(async () => (await client.exists(entryKey(uuid))) === 1, 5000);
    const entry = JSON.parse((await client.get(entryKey(uuid)))!);
    expect(entry).toMatchObject({ uuid, node: 'node-a', account: MAIN.id });
    /** When both keys would be gone by now had nothing given them their time again. */
    let unrefreshedExpiry = 0;
    for (const key of [entryKey(uuid), nodeKey('node-a')]) {
      const left = await client.pttl(key);
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(LIVE_CALL_TTL_MS);
      unrefreshedExpiry = Math.max(unrefreshedExpiry, Date.now() + left);
    }

    // Past one whole time to live: the node's heartbeats kept giving the keys their time. (It
    // waited LIVE_CALL_TTL_MS + 1.5 s from here; the keys' own expiry as read above, plus a
    // margin, is that whole time to live without the part of it already gone.)
    await pause(unrefreshedExpiry + 250 - Date.now());
    expect(await client.exists(entryKey(uuid))).toBe(1);
    expect(await client.smembers(nodeKey('node-a'))).toEqual([uuid]);
    expect(await client.pttl(entryKey(uuid))).toBeGreaterThan(LIVE_CALL_TTL_MS - 2500);
    expect(await client.pttl(nodeKey('node-a'))).toBeGreaterThan(LIVE_CALL_TTL_MS - 2500);

    expect((await a.request('DELETE', `${v1}/Call/${uuid}/`)).status).toBe(204);
    await until(async () => (await client.exists(entryKey(uuid), nodeKey('node-a'))) === 0, 5000);
    expect(a.gateway.calls.liveCount).toBe(0);
  }, 40_000);
});

describe('a call whose node died', () => {
  it('ends at the node last heartbeat, and its record and hangup callback tell the same times', async () => {
    await dHealthy;
    const d = await dSpawned;
    // Both nodes are idle: the node asked places the call itself.
    const placed = await placeCarrierCall(
      { gw: overHttp(d.port), app, carriers, peers },
      '<Response><Wait length="60"/></Response>',
      { hangup_url: `${app.baseUrl}/hangup` },
    );
    const uuid = await answeredCallUuid(app, placed.requestUuid);
    await until(async () => (await client.exists(entryKey(uuid))) === 1, 5000);
    expect(JSON.parse((await client.get(entryKey(uuid)))!).node).toBe('node-d');
    // Long enough to be billed for a few seconds.
    await pause(2500);

    d.child.kill('SIGKILL');
    await new Promise((resolve) => d.child.once('exit', resolve));
    const lastBeat = Number(await client.zscore(HEARTBEATS, 'node-d'));
    expect(lastBeat).toBeGreaterThan(0);

    await until(() => app.requestsTo('/hangup').length === 1, 15_000);
    const hangup = app.requestsTo('/hangup')[0]!;
    // Closed by the survivor once the node was found dead: a time to live after its last beat.
    expect(hangup.receivedAt - lastBeat).toBeGreaterThanOrEqual(TEST_HEARTBEAT.nodeTtlMs);
    expectValidSignatures(hangup, { accountToken: MAIN.token, mainToken: MAIN.token });
    const record = (await a.request('GET', `${v1}/Call/${uuid}/`)).body;
    expect(record).toMatchObject({ call_uuid: uuid, hangup_cause_code: 5000 });
    // The record ends at the node's last beat (the call's entry was refreshed by the beat
    // before it at the earliest), cut to the second as every record time is.
    const endedAt = recordTimeMs(record.end_time);
    expect(endedAt).toBeLessThanOrEqual(lastBeat);
    expect(endedAt).toBeGreaterThan(lastBeat - 2000);
    expect(record.call_duration).toBeGreaterThanOrEqual(2);
    // The hangup callback tells that record's times and durations.
    const time = (t: string | null) => (t === null ? '' : t.replace('+00:00', ''));
    expect(hangup.params).toMatchObject({
      CallUUID: uuid,
      CallStatus: 'completed',
      HangupCauseCode: '5000',
      HangupSource: 'Error',
      StartTime: time(record.initiation_time),
      AnswerTime: time(record.answer_time),
      EndTime: time(record.end_time),
      Duration: String(record.call_duration),
      BillDuration: String(record.bill_duration),
    });
    // Nothing of the node or its call is left once the survivor is done with it.
    await until(async () => (await client.zscore(HEARTBEATS, 'node-d')) === null, 5000);
    expect(await client.exists(entryKey(uuid), nodeKey('node-d'))).toBe(0);
  }, 60_000);
});
