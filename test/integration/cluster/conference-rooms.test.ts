import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp, paramsOf } from '../../support/client-app.js';
import { TEST_HEARTBEAT_ENV } from '../../support/cluster-heartbeat.js';
import { freePort } from '../../support/free-port.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { processApi, spawnGateway, type GatewayProcess } from '../../support/gateway-process.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { powerAt } from '../../support/signal.js';
import { openSipPeer, type SipPeer } from '../../support/sip-peer.js';
import { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * Two nodes on one redis-server: node D in a process of its own (killed with SIGKILL below),
 * node A in this one. A conference room lives on the node that opened it; a caller reaching
 * the other node while it is open is refused (the document goes on), and once the owning node
 * is dead a new member opens the room on the survivor. Both nodes have the cluster tests'
 * faster heartbeat.
 */
const NUMBER = '14155550166';
const ROOM = 'cluster-room';
const CLAIM_KEY = (authId: string) => `voxgate:conference-room:${authId}:${ROOM}`;
let redis: RedisServer;
let client: Redis;
let app: ClientApp;
let sip: SipPeer;
let a: TestGateway;
let d: GatewayProcess;
let dSipPort: number;
const phones: TonePhone[] = [];
/** Phones whose calls ran on the killed node: closed without a BYE nobody would answer. */
const orphaned = new Set<TonePhone>();

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
  app = await ClientApp.start();
  sip = await openSipPeer();
  a = await startGateway({
    redisUrl: redis.url,
    listen: true,
    env: { VOXGATE_NODE_ID: 'node-a', ...TEST_HEARTBEAT_ENV },
  });
  dSipPort = await freePort();
  const rtp = 40000 + 2 * Math.floor(Math.random() * 5000);
  d = await spawnGateway({
    VOXGATE_REDIS_URL: redis.url,
    VOXGATE_NODE_ID: 'node-d',
    VOXGATE_AUTH_ID: a.main.id,
    VOXGATE_AUTH_TOKEN: a.main.token,
    VOXGATE_SIP_HOST: '127.0.0.1',
    VOXGATE_RTP_HOST: '127.0.0.1',
    VOXGATE_SIP_PORT: String(dSipPort),
    VOXGATE_RTP_PORTS: `${rtp}-${rtp + 199}`,
    VOXGATE_MEDIA_WORKERS: '1',
    VOXGATE_RATE_LIMIT: '0',
    ...TEST_HEARTBEAT_ENV,
  });
  await d.healthy();
  const application = await a.request('POST', `/v1/Account/${a.main.id}/Application/`, {
    json: { app_name: 'rooms', answer_url: `${app.baseUrl}/answer` },
  });
  await a.request('POST', `/v1/Account/${a.main.id}/Number/`, {
    json: { numbers: NUMBER, carrier: 'Own SIP', region: 'West', app_id: application.body.app_id },
  });
  app.serve('/answer', {
    body: `<Response><Conference>${ROOM}</Conference><Redirect>${app.baseUrl}/refused</Redirect></Response>`,
  });
  app.serve('/refused', { body: '<Response><Wait length="30"/></Response>' });
}, 60_000);

afterAll(async () => {
  if (d && d.child.exitCode === null) d.child.kill('SIGKILL');
  for (const phone of phones) {
    if (!orphaned.has(phone)) await phone.hangup();
    await phone.close();
  }
  sip?.stack.close();
  await a?.close();
  await app?.close();
  client?.disconnect();
  await redis?.stop();
});

async function call(port: number, from: string, hz: number): Promise<TonePhone> {
  const phone = await TonePhone.call(sip, { user: NUMBER, port, from }, hz);
  phones.push(phone);
  return phone;
}

const refusedCallers = () => app.requestsTo('/refused').map((r) => paramsOf(r).From);
const membersOn = async (gw: TestGateway) => {
  const shown = await gw.request('GET', `/v1/Account/${gw.main.id}/Conference/${ROOM}/`);
  return shown.status === 200 ? (shown.body.members as { from: string }[]).map((m) => m.from) : [];
};

/** Power at `hz` in what `phone` heard over the last second. */
async function heardTone(phone: TonePhone, hz: number): Promise<number> {
  const from = phone.now;
  await sleep(1000);
  return powerAt(phone.heard(from), 8000, hz);
}

describe('a conference room in a cluster', () => {
  it('lives on the node that opened it: a caller on another node is refused, not split off', async () => {
    const viaD = processApi(d.port, a.main);
    const first = await call(dSipPort, 'd-first', 500);
    await until(async () => (await membersOn(viaD)).length === 1, 5000);
    expect(await client.get(CLAIM_KEY(a.main.id))).toMatch(/^node-d /);

    // The same room name on node A: refused with a log line, the document goes on.
    const other = await call(a.gateway.sip.addresses.udp.port, 'a-other', 800);
    await until(() => refusedCallers().includes('a-other'), 5000);
    const line = a.logs.find((l) => l.includes('the conference is open on another gateway node'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ conference: ROOM, node: 'node-d' });
    // No second room of that name on node A: its API shows node D's, without the refused caller.
    expect(a.gateway.calls.conferences.find(a.main.id, ROOM)).toBeNull();
    expect(await membersOn(a)).toEqual(['d-first']);

    // Node D's room goes on: a second member there hears the first, and not node A's caller.
    const second = await call(dSipPort, 'd-second', 1300);
    await until(async () => (await membersOn(viaD)).length === 2, 5000);
    await sleep(300);
    expect(await heardTone(second, 500)).toBeGreaterThan(1e6);
    expect(await heardTone(first, 800), 'no audio from the refused caller').toBeLessThan(1e4);
    void other;
  }, 40_000);

  it('opens on the surviving node once the node holding it is killed mid-conference', async () => {
    const before = phones.filter((p) => p.hz !== 800);
    for (const phone of before) orphaned.add(phone);
    d.child.kill('SIGKILL');
    const killedAt = Date.now();
    // Until node A finds D dead (no beat for a time to live), a caller is refused as before.
    await until(async () => {
      const health = await a.request('GET', '/health');
      return !(health.body.peers as { id: string }[]).some((p) => p.id === 'node-d');
    }, 10_000);
    const one = await call(a.gateway.sip.addresses.udp.port, 'a-one', 500);
    const two = await call(a.gateway.sip.addresses.udp.port, 'a-two', 1300);
    await until(async () => (await membersOn(a)).length === 2, 5000);
    console.info(
      `conference room taken over ${Date.now() - killedAt} ms after its node was killed`,
    );
    expect(refusedCallers()).toEqual(['a-other']);
    expect(await client.get(CLAIM_KEY(a.main.id))).toMatch(/^node-a /);
    await sleep(300);
    expect(await heardTone(one, 1300)).toBeGreaterThan(1e6);
    expect(await heardTone(two, 500)).toBeGreaterThan(1e6);

    // The room closes when its members leave, and its claim goes with it.
    await one.hangup();
    await two.hangup();
    await until(async () => (await client.get(CLAIM_KEY(a.main.id))) === null, 5000);
  }, 40_000);
});
