import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { TEST_HEARTBEAT_ENV } from '../../support/cluster-heartbeat.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { until } from '../../support/wait.js';
import { WsSipTokenClient, mintToken } from '../../support/ws-sip-token-client.js';

/**
 * Two nodes on one Redis, a browser registered over WebSocket on each. Only the node that
 * holds a browser's connection can send to it: a call placed on the other node to the first
 * browser must not go out on a connection of its own, least of all one that happens to carry
 * the same connection id (another user's browser), and fails as unreachable instead.
 */
let redis: RedisServer;
let a: TestGateway;
let b: TestGateway;
let app: ClientApp;

beforeAll(async () => {
  redis = await startRedis();
  app = await ClientApp.start();
  a = await startGateway({
    redisUrl: redis.url,
    listen: true,
    env: { VOXGATE_NODE_ID: 'node-a', ...TEST_HEARTBEAT_ENV },
  });
  b = await startGateway({
    redisUrl: redis.url,
    listen: true,
    env: { VOXGATE_NODE_ID: 'node-b', ...TEST_HEARTBEAT_ENV },
  });
});

afterAll(async () => {
  await a.close();
  await b.close();
  await app.close();
  await redis.stop();
});

const wsUrl = (gw: TestGateway) => `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;

describe("a browser registered over another node's WebSocket", () => {
  it('is not called on a connection of this node, and the call fails as unreachable', async () => {
    // The first connection of each node: with per-process counters both were `ws-1`.
    const alice = await WsSipTokenClient.connect(wsUrl(a));
    const bob = await WsSipTokenClient.connect(wsUrl(b));
    try {
      expect(await alice.register('alice', await mintToken(a, a.main, 'alice'))).toBe(200);
      expect(await bob.register('bob', await mintToken(b, b.main, 'bob'))).toBe(200);
      const aliceBinding = (await a.gateway.state.registrations.get(
        a.main.id,
        `token:${a.main.id}:alice`,
      ))!.bindings[0]!;
      const bobBinding = (await b.gateway.state.registrations.get(
        b.main.id,
        `token:${b.main.id}:bob`,
      ))!.bindings[0]!;
      expect(aliceBinding.node).toBe('node-a');
      expect(bobBinding.node).toBe('node-b');

      app.serve('/answer', { body: '<Response><Speak>hello</Speak></Response>' });
      const placed = await b.request('POST', `/v1/Account/${b.main.id}/Call/`, {
        json: {
          from: '+14155550100',
          to: 'sip:alice@127.0.0.1',
          answer_url: `${app.baseUrl}/answer`,
          hangup_url: `${app.baseUrl}/hangup`,
        },
      });
      expect(placed.status).toBe(201);
      await until(() => app.requestsTo('/hangup').length > 0, 15_000);
      // Neither browser was sent an INVITE: bob's is not alice's, and node-b cannot reach hers.
      expect(bob.invites()).toEqual([]);
      expect(alice.invites()).toEqual([]);
      expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
        CallStatus: 'failed',
        HangupCauseName: 'Endpoint Not Registered',
      });
      const warning = b.logs
        .map((line) => JSON.parse(line) as { msg: string; node?: string })
        .find((entry) => entry.msg.includes('held by node node-a'));
      expect(warning).toMatchObject({ node: 'node-a' });
      // Connection ids name one connection across the cluster.
      expect(aliceBinding.connection_id).not.toBe(bobBinding.connection_id);
    } finally {
      await alice.close();
      await bob.close();
    }
  }, 60_000);

  it("rings the user's registrations this node holds when the newest is another node's", async () => {
    const token = await mintToken(a, a.main, 'carol');
    const onB = await WsSipTokenClient.connect(wsUrl(b));
    const onA = await WsSipTokenClient.connect(wsUrl(a));
    try {
      const contact = (tab: string) => `sip:carol@${tab}.invalid;transport=ws`;
      expect(await onB.register('carol', token, { contact: contact('tab-b') })).toBe(200);
      // Registered last, so its registration lasts longest: the newest, held by node A.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await onA.register('carol', token, { contact: contact('tab-a') })).toBe(200);
      app.serve('/carol', { body: '<Response><Speak>hello</Speak></Response>' });
      const placed = await b.request('POST', `/v1/Account/${b.main.id}/Call/`, {
        json: {
          from: '+14155550100',
          to: 'sip:carol@127.0.0.1',
          answer_url: `${app.baseUrl}/carol`,
          hangup_url: `${app.baseUrl}/carol-hangup`,
        },
      });
      expect(placed.status).toBe(201);
      await until(() => app.requestsTo('/carol-hangup').length > 0, 15_000);
      expect(onB.invites()).toHaveLength(1);
      expect(onA.invites()).toEqual([]);
      expect(app.requestsTo('/carol-hangup')[0]!.params).toMatchObject({
        CallStatus: 'busy',
        HangupCauseName: 'Busy Line',
      });
    } finally {
      await onA.close();
      await onB.close();
    }
  }, 30_000);
});
