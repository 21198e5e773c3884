import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_HEARTBEAT_ENV } from '../../support/cluster-heartbeat.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { registerEndpoint, udpChannel, wsChannel } from '../../support/sip-registration.js';
import { until } from '../../support/wait.js';

/**
 * Two nodes on one Redis change one endpoint's registration at the same moment: REGISTERs of
 * many devices at once, half on each node, and connections closing on one node (their
 * bindings going) while devices register on the other. Each change reads the registration and
 * writes it back; without a compare-and-set the last writer wins and the bindings another
 * write added or removed in between are lost (a device unreachable until its next refresh, or
 * a closed connection's binding back). Counted from the store: every binding a 200 granted is
 * there, and none a closed connection held.
 */
let redis: RedisServer;
let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  redis = await startRedis();
  const env = (node: string) => ({ VOXGATE_NODE_ID: node, ...TEST_HEARTBEAT_ENV });
  a = await startGateway({ redisUrl: redis.url, listen: true, env: env('node-a') });
  b = await startGateway({ redisUrl: redis.url, listen: true, env: env('node-b') });
});

afterAll(async () => {
  await a.close();
  await b.close();
  await redis.stop();
});

async function endpoint(name: string) {
  const password = `${name}-Secret1`;
  const created = await a.request('POST', `/v1/Account/${a.main.id}/Endpoint/`, {
    json: { username: name, password, alias: name },
  });
  expect(created.status).toBe(201);
  return {
    id: created.body.endpoint_id as string,
    username: created.body.username as string,
    password,
  };
}

async function contacts(endpointId: string): Promise<string[]> {
  const stored = await a.gateway.state.registrations.get(a.main.id, `endpoint:${endpointId}`);
  return (stored?.bindings ?? []).map((binding) => binding.contact).sort();
}

const udpPort = (gw: TestGateway) => gw.gateway.sip.addresses.udp.port;
const wsPort = (gw: TestGateway) => gw.gateway.sip.addresses.ws.port;

describe('one registration changed on two nodes at once', () => {
  it('keeps every binding of twenty devices registering at the same moment', async () => {
    const desk = await endpoint('racedesk');
    const channels = await Promise.all(
      Array.from({ length: 20 }, (_, i) => udpChannel(udpPort(i % 2 === 0 ? a : b))),
    );
    try {
      const answers = await Promise.all(channels.map((c) => registerEndpoint(c, desk)));
      expect(answers.map((r) => r.status)).toEqual(channels.map(() => 200));
      const expected = channels.map((c) => `sip:${desk.username}@${c.sentBy};transport=udp`).sort();
      expect(await contacts(desk.id)).toEqual(expected);
    } finally {
      for (const c of channels) c.close();
    }
  }, 30_000);

  it('drops the bindings of connections closing on one node while devices register on the other', async () => {
    const desk = await endpoint('racecloser');
    const browsers = await Promise.all(Array.from({ length: 8 }, () => wsChannel(wsPort(a))));
    const phones = await Promise.all(Array.from({ length: 8 }, () => udpChannel(udpPort(b))));
    try {
      for (const browser of browsers)
        expect((await registerEndpoint(browser, desk)).status).toBe(200);
      expect(await contacts(desk.id)).toHaveLength(8);
      const [closing, staying] = [browsers.slice(0, 4), browsers.slice(4)];
      const registered = Promise.all(phones.map((p) => registerEndpoint(p, desk)));
      for (const browser of closing) browser.close();
      expect((await registered).map((r) => r.status)).toEqual(phones.map(() => 200));
      const expected = [...staying, ...phones]
        .map((c) => `sip:${desk.username}@${c.sentBy};transport=${c.transport.toLowerCase()}`)
        .sort();
      await until(async () => (await contacts(desk.id)).length === expected.length, 5000);
      expect(await contacts(desk.id)).toEqual(expected);
    } finally {
      for (const c of [...browsers, ...phones]) c.close();
    }
  }, 30_000);
});
