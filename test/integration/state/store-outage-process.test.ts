import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_TIMEOUT_MS } from '../../../src/state/store-deadline.js';
import { spawnGateway, type GatewayProcess } from '../../support/gateway-process.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { sleep } from '../../support/wait.js';

const MAIN = 'MA' + 'PROCESSO'.repeat(2) + 'UT';
const TOKEN = 'p'.repeat(40);
/** What the clock may add to the promise on a machine others share (real HTTP here). */
const SLACK_MS = 500;
const basic = `Basic ${Buffer.from(`${MAIN}:${TOKEN}`).toString('base64')}`;

let redis: RedisServer;
let gateway: GatewayProcess;

/** One of each request that reaches Redis by its own path, at once, over HTTP. */
function burst(): Promise<{ what: string; status: number; ms: number; body: unknown }[]> {
  const base = `/v1/Account/${MAIN}`;
  const requests: [string, string, unknown?][] = [
    [
      'POST',
      `${base}/Call/`,
      { from: '14155550100', to: 'sip:x@127.0.0.1:9', answer_url: 'http://127.0.0.1:9/a' },
    ],
    ['GET', `/v2/Account/${MAIN}/Call/`],
    ['GET', `${base}/Call/?limit=2`],
    ['POST', `${base}/Message/`, { src: '14155550100', dst: '447400123456', text: 'hi' }],
    ['GET', `${base}/Application/`],
  ];
  return Promise.all(
    requests.map(async ([method, path, json]) => {
      const started = Date.now();
      const res = await fetch(`http://127.0.0.1:${gateway.port}${path}`, {
        method,
        headers: {
          authorization: basic,
          ...(json ? { 'content-type': 'application/json' } : {}),
        },
        ...(json ? { body: JSON.stringify(json) } : {}),
      });
      const body: unknown = await res.json();
      return { what: `${method} ${path}`, status: res.status, ms: Date.now() - started, body };
    }),
  );
}

async function health(): Promise<{ status: number; ms: number; body: unknown }> {
  const started = Date.now();
  const res = await fetch(`http://127.0.0.1:${gateway.port}/health`);
  return { status: res.status, ms: Date.now() - started, body: await res.json() };
}

async function expectUnavailable(): Promise<void> {
  // Twice: the first requests meet a connection that has just lost Redis, the next a known loss.
  for (let round = 0; round < 2; round++) {
    for (const answer of await burst()) {
      expect(answer.status, JSON.stringify(answer)).toBe(503);
      expect(answer.ms, JSON.stringify(answer)).toBeLessThan(STORE_TIMEOUT_MS + SLACK_MS);
      expect(answer.body).toMatchObject({ error: expect.stringMatching(/state store \(Redis\)/) });
    }
    const probe = await health();
    expect(probe.status, JSON.stringify(probe)).toBe(503);
    expect(probe.ms).toBeLessThan(1000);
  }
}

describe('a gateway process through Redis outages', () => {
  beforeAll(async () => {
    redis = await startRedis({ persistent: true });
    gateway = await spawnGateway({
      VOXGATE_REDIS_URL: redis.url,
      VOXGATE_AUTH_ID: MAIN,
      VOXGATE_AUTH_TOKEN: TOKEN,
      VOXGATE_SIP_HOST: '127.0.0.1',
      VOXGATE_RTP_HOST: '127.0.0.1',
      VOXGATE_MEDIA_WORKERS: '1',
      VOXGATE_DRAIN_TIMEOUT: '1',
    });
    await gateway.healthy();
    const added = await fetch(`http://127.0.0.1:${gateway.port}/v1/Account/${MAIN}/Number/`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: JSON.stringify({ numbers: '14155550100', carrier: 'c', region: 'r' }),
    });
    expect(added.status).toBe(201);
  }, 30_000);

  afterAll(async () => {
    await gateway?.stop().catch(() => undefined);
    await redis?.stop();
  });

  it('answers 503 in time through a kill and a hang, serves again after each, and stops during a hang without an unhandled rejection', async () => {
    await redis.kill();
    await expectUnavailable();
    await redis.restart();
    await gateway.healthy();
    expect((await burst()).map((a) => a.status)).toEqual([201, 200, 200, 202, 200]);

    redis.pause();
    await expectUnavailable();
    redis.resume();
    await gateway.healthy();

    // SIGTERM while Redis hangs: the drain tells the peers when it can, and the process ends.
    redis.pause();
    await sleep(500);
    const stopped = gateway.stop();
    await sleep(STORE_TIMEOUT_MS);
    redis.resume();
    // stop() throws if the gateway reported an unhandled rejection.
    expect(await stopped).toBe(0);
    expect(gateway.stderr()).not.toMatch(/unhandled/i);
  }, 90_000);
});
