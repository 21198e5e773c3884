import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_TIMEOUT_MS } from '../../../src/state/store-deadline.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway, type TestResponse } from '../../support/gateway.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { sleep, until } from '../../support/wait.js';

const MAIN = 'MA' + 'OUTAGEXY'.repeat(2) + 'AB';
const NUMBER = '14155550100';
const env = {
  VOXGATE_AUTH_ID: MAIN,
  VOXGATE_AUTH_TOKEN: 'o'.repeat(40),
  // The limiter on, as deployed: it asks Redis first on every request.
  VOXGATE_RATE_LIMIT: '1000',
};

/** What the clock may add to the promise on a machine others share. */
const SLACK_MS = 500;
/** /health answers within this, outage or not. */
const HEALTH_MS = 1000;

/** The requests of the load: each reaches Redis by another path. */
type Kind = 'place call' | 'live calls' | 'call records' | 'send message' | 'applications';
const KINDS: Kind[] = ['place call', 'live calls', 'call records', 'send message', 'applications'];
const SUCCESS: Record<Kind, number> = {
  'place call': 201,
  'live calls': 200,
  'call records': 200,
  'send message': 202,
  applications: 200,
};

interface Answer {
  kind: Kind;
  startedAt: number;
  ms: number;
  status: number;
  retryAfter: unknown;
  body: unknown;
}

/** The node under load. */
let gw: TestGateway;
/** A second node on the same Redis: the load's calls are placed on it, and listed through it. */
let peer: TestGateway;
let redis: RedisServer;
let client: ClientApp;
/** Where placed calls go: a socket that never answers, so they stay ringing until hung up. */
let callee: Socket;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

function request(kind: Kind): Promise<TestResponse> {
  const base = `/v1/Account/${MAIN}`;
  switch (kind) {
    case 'place call':
      return gw.request('POST', `${base}/Call/`, {
        json: {
          from: NUMBER,
          to: `sip:nobody@127.0.0.1:${callee.address().port}`,
          answer_url: `${client.baseUrl}/answer`,
        },
      });
    case 'live calls':
      return gw.request('GET', `/v2/Account/${MAIN}/Call/`);
    case 'call records':
      return gw.request('GET', `${base}/Call/?limit=5`);
    case 'send message':
      return gw.request('POST', `${base}/Message/`, {
        json: { src: NUMBER, dst: '447400123456', text: 'during the outage' },
      });
    case 'applications':
      return gw.request('GET', `${base}/Application/?limit=5`);
  }
}

/**
 * Clients sending the requests above without pause, each its own loop, until stopped; each
 * client keeps to one kind, so that every kind is asked again within the deadline whatever the
 * machine's load (a request asked before the fault ends within it, and its client asks anew).
 */
function startLoad(clients: number): { stop(): Promise<Answer[]> } {
  const answers: Answer[] = [];
  let running = true;
  const loops = Array.from({ length: clients }, async (_, c) => {
    const kind = KINDS[c % KINDS.length]!;
    while (running) {
      const startedAt = Date.now();
      const res = await request(kind);
      answers.push({
        kind,
        startedAt,
        ms: Date.now() - startedAt,
        status: res.status,
        retryAfter: res.headers['retry-after'],
        body: res.body,
      });
      await sleep(5);
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return answers;
    },
  };
}

async function health(): Promise<{ status: number; ms: number; body: Record<string, unknown> }> {
  const startedAt = Date.now();
  const res = await gw.request('GET', '/health', { as: null });
  return { status: res.status, ms: Date.now() - startedAt, body: res.body };
}

/**
 * Runs the load, brings the fault on after a healthy second, keeps the load on for twice the
 * deadline and probes /health meanwhile; then ends the fault and waits for /health to say the
 * store is back. What every request and probe answered, and when the fault began.
 */
async function loadAcross(fault: { begin(): Promise<void>; end(): Promise<void> }) {
  const load = startLoad(2 * KINDS.length);
  await sleep(1000);
  await fault.begin();
  const faultAt = Date.now();
  const probes: Awaited<ReturnType<typeof health>>[] = [];
  while (Date.now() - faultAt < 2 * STORE_TIMEOUT_MS) {
    probes.push(await health());
    await sleep(200);
  }
  // The idle node says so too.
  const idle = await peer.request('GET', '/health', { as: null });
  expect(idle.body).toMatchObject({ status: 'store_unavailable', store: 'unavailable' });
  const answers = await load.stop();
  await fault.end();
  await until(async () => (await health()).status === 200, 15_000, 100);
  return { answers, probes, faultAt };
}

function expectUnavailableWithinDeadline(answers: Answer[], faultAt: number): void {
  const summary = JSON.stringify(
    KINDS.map((kind) => {
      const those = answers.filter((a) => a.kind === kind);
      return { kind, count: those.length, statuses: [...new Set(those.map((a) => a.status))] };
    }),
  );
  // Answered before the fault: as in any second.
  const before = answers.filter((a) => a.startedAt + a.ms < faultAt);
  for (const a of before) expect(a.status, JSON.stringify(a)).toBe(SUCCESS[a.kind]);
  // Asked once the store was gone: 503 with Retry-After, in the envelope, within the deadline.
  const during = answers.filter((a) => a.startedAt >= faultAt);
  for (const kind of KINDS)
    expect(
      during.filter((a) => a.kind === kind).length,
      `${kind} during the outage: ${summary}`,
    ).toBeGreaterThan(0);
  for (const a of during) {
    expect(a.status, JSON.stringify(a)).toBe(503);
    expect(a.retryAfter, JSON.stringify(a)).toBe('2');
    expect(a.body).toEqual({
      api_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      error: 'the state store (Redis) is unavailable; try again in a few seconds',
    });
  }
  // In flight as it began: done, or refused as above.
  const across = answers.filter((a) => a.startedAt < faultAt && a.startedAt + a.ms >= faultAt);
  for (const a of across) expect([SUCCESS[a.kind], 503], JSON.stringify(a)).toContain(a.status);
  for (const a of answers)
    expect(a.ms, JSON.stringify(a)).toBeLessThan(STORE_TIMEOUT_MS + SLACK_MS);
  console.log(
    `store outage: ${answers.length} answers, ${during.length} during, slowest ` +
      `${Math.max(...answers.map((a) => a.ms))} ms; ${summary}`,
  );
}

function expectHealthSaysStoreDown(probes: Awaited<ReturnType<typeof health>>[]): void {
  expect(probes.length).toBeGreaterThan(3);
  // The first probe may come before the store's connection noticed; every later one says so.
  for (const probe of probes.slice(1)) {
    expect(probe.status, JSON.stringify(probe)).toBe(503);
    expect(probe.body).toMatchObject({ status: 'store_unavailable', store: 'unavailable' });
    expect(probe.body.api_id).toEqual(expect.any(String));
  }
  for (const probe of probes) expect(probe.ms, JSON.stringify(probe)).toBeLessThan(HEALTH_MS);
  console.log(`health during the outage: slowest ${Math.max(...probes.map((p) => p.ms))} ms`);
}

/**
 * Each request answered as before, by the same gateways; /health says the store is back; and
 * the nodes reach each other again (their control subscriptions were renewed): each lists the
 * other's calls.
 */
async function expectServedAgain(): Promise<void> {
  for (const kind of KINDS) {
    const res = await request(kind);
    expect(res.status, `${kind}: ${res.text}`).toBe(SUCCESS[kind]);
  }
  const probe = await health();
  expect(probe.body).toMatchObject({ status: 'ok', store: 'ok' });
  expect(probe.ms).toBeLessThan(HEALTH_MS);
  const running = () => gw.gateway.calls.liveCount + peer.gateway.calls.liveCount;
  expect(peer.gateway.calls.liveCount).toBeGreaterThan(0);
  expect(gw.gateway.calls.liveCount).toBeGreaterThan(0);
  for (const node of [gw, peer]) {
    // Calls placed before the outage may end meanwhile: the count is taken again until equal.
    await until(
      async () => {
        const listed = await node.request('GET', `/v2/Account/${MAIN}/Call/?limit=1`);
        return listed.status === 200 && listed.body.meta.total_count === running();
      },
      5000,
      100,
    );
  }
}

describe('a Redis outage under load (one node, real redis-server)', () => {
  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    redis = await startRedis({ persistent: true });
    client = await ClientApp.start();
    callee = createSocket('udp4');
    await new Promise<void>((resolve) => callee.bind(0, '127.0.0.1', resolve));
    gw = await startGateway({
      redisUrl: redis.url,
      listen: true,
      env: { ...env, VOXGATE_NODE_ID: 'node-a' },
    });
    // The second node finds the main account the first stored.
    peer = await startGateway({
      redisUrl: redis.url,
      listen: true,
      env: { ...env, VOXGATE_NODE_ID: 'node-b' },
    });
    const added = await gw.request('POST', `/v1/Account/${MAIN}/Number/`, {
      json: { numbers: NUMBER, carrier: 'c', region: 'r' },
    });
    expect(added.status).toBe(201);
    expect((await health()).status).toBe(200);
  }, 30_000);

  afterAll(async () => {
    await gw?.close();
    await peer?.close();
    callee?.close();
    await client?.close();
    await redis?.stop();
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
  }, 30_000);

  it('answers 503 within the deadline while Redis is killed, and serves again once it restarts', async () => {
    const { answers, probes, faultAt } = await loadAcross({
      begin: () => redis.kill(),
      end: () => redis.restart(),
    });
    expectUnavailableWithinDeadline(answers, faultAt);
    expectHealthSaysStoreDown(probes);
    await expectServedAgain();
    expect(unhandled).toEqual([]);
  }, 60_000);

  it('answers 503 within the deadline while Redis hangs (SIGSTOP), and serves again on SIGCONT', async () => {
    const { answers, probes, faultAt } = await loadAcross({
      begin: async () => redis.pause(),
      end: async () => redis.resume(),
    });
    expectUnavailableWithinDeadline(answers, faultAt);
    expectHealthSaysStoreDown(probes);
    await expectServedAgain();
    expect(unhandled).toEqual([]);
  }, 60_000);
});
