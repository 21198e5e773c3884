import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBaresip } from '../../support/baresip.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { nodeUri, startKamailio, type Kamailio } from '../../support/kamailio.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { freePort } from '../../support/free-port.js';
import { runSipp, startSippUas, type SipTarget } from '../../support/sipp.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { lendWebSocketGlobal, startSipjsPhone } from '../../support/sipjs-phone.js';
import { until } from '../../support/wait.js';
import { SessionState } from 'sip.js';

/**
 * Two gateway nodes (127.0.0.2 and 127.0.0.3) sharing one redis-server, behind Kamailio on
 * 127.0.0.1 running docker/kamailio/kamailio.cfg: SIPp calls spread over the nodes and fail
 * over from a node that refuses (503) or is gone (timeout), a stopped node is probed out, the
 * operator's dispatcher reload adds and removes nodes, and a baresip phone registered through
 * Kamailio (Path, RFC 3327) is called from either node through it.
 */
const ID = 'MA' + 'K'.repeat(18);
const TOKEN = 'Kamailio'.repeat(5);
const NUMBER = '14155550142';

let redis: RedisServer;
let app: ClientApp;
const nodes: Record<'a' | 'b', TestGateway> = {} as Record<'a' | 'b', TestGateway>;
const extra: TestGateway[] = [];
const closed = new Set<TestGateway>();
let kamailio: Kamailio;
type Endpoint = { id: string; username: string; password: string };
let endpoint: Endpoint;
let webEndpoint: Endpoint;
let giveBackWebSocket: (() => void) | undefined;

const startNode = (host: string) =>
  startGateway({
    listen: true,
    redisUrl: redis.url,
    env: {
      VOXGATE_SIP_HOST: host,
      VOXGATE_RTP_HOST: host,
      VOXGATE_PUBLIC_HOST: host,
      VOXGATE_AUTH_ID: ID,
      VOXGATE_AUTH_TOKEN: TOKEN,
    },
  });
const sipOf = (node: TestGateway, host: string): SipTarget => ({
  host,
  port: node.gateway.sip.addresses.udp.port,
});

beforeAll(async () => {
  [redis, app] = await Promise.all([startRedis(), ClientApp.start()]);
  nodes.a = await startNode('127.0.0.2');
  nodes.b = await startNode('127.0.0.3');
  const application = await nodes.a.request('POST', `/v1/Account/${ID}/Application/`, {
    json: { app_name: 'behind kamailio', answer_url: `${app.baseUrl}/answer` },
  });
  expect(application.status).toBe(201);
  const number = await nodes.a.request('POST', `/v1/Account/${ID}/Number/`, {
    json: { numbers: NUMBER, carrier: 'Own SIP', region: 'West', app_id: application.body.app_id },
  });
  expect(number.status).toBeLessThan(300);
  const makeEndpoint = async (username: string): Promise<Endpoint> => {
    const password = 'Proxied-Secret1';
    const created = await nodes.a.request('POST', `/v1/Account/${ID}/Endpoint/`, {
      json: { username, password, alias: username },
    });
    expect(created.status).toBe(201);
    return { id: created.body.endpoint_id, username: created.body.username, password };
  };
  endpoint = await makeEndpoint('roamer');
  webEndpoint = await makeEndpoint('browser');
  // sip.js looks for a browser's WebSocket class; in Node 20 it is ws's.
  giveBackWebSocket = lendWebSocketGlobal();
  app.serve('/answer', { body: '<Response><Speak>Hello.</Speak><Wait length="10"/></Response>' });
  kamailio = await startKamailio({
    nodes: [sipOf(nodes.a, '127.0.0.2'), sipOf(nodes.b, '127.0.0.3')],
    websocket: true,
  });
  await kamailio.waitForStates({
    [nodeUri(sipOf(nodes.a, '127.0.0.2'))]: 'AP',
    [nodeUri(sipOf(nodes.b, '127.0.0.3'))]: 'AP',
  });
}, 60_000);

afterAll(async () => {
  await kamailio?.stop();
  await Promise.all(
    [nodes.a, nodes.b, ...extra].filter((node) => node && !closed.has(node)).map((n) => n.close()),
  );
  await app?.close();
  await redis?.stop();
  giveBackWebSocket?.();
});

/** SIPp calls to NUMBER through a proxy; the hosts of the nodes whose 200s answered them. */
async function callThrough(proxy: SipTarget, calls: number) {
  const result = await runSipp({
    scenario: 'uac-invite.xml',
    target: proxy,
    calls,
    rate: 4,
    extraArgs: ['-s', NUMBER, '-d', '300'],
    traceMessages: true,
    timeoutMs: 40_000,
  });
  const answeredBy = result.messages
    .split(/^-{10,}.*$/m)
    .filter((message) => /^SIP\/2\.0 200 /m.test(message) && /^CSeq: 1 INVITE/m.test(message))
    .map((message) => /^Contact: <sip:(?:[^@>]*@)?([\d.]+):/m.exec(message)?.[1] ?? 'none');
  return { result, answeredBy };
}

const count = (hosts: string[], host: string) => hosts.filter((h) => h === host).length;

/** The SIP messages a node traced, as sent or received, with their peer. */
function traced(node: TestGateway, direction: 'SIP sent' | 'SIP received') {
  return node.logs
    .map((line) => JSON.parse(line) as { msg: string; peer?: string; message?: string })
    .filter((entry) => entry.msg === direction)
    .map((entry) => ({ peer: entry.peer ?? '', message: entry.message ?? '' }));
}

describe('voxgate behind Kamailio', () => {
  it('spreads SIPp calls through Kamailio over both nodes', async () => {
    const { result, answeredBy } = await callThrough(kamailio, 6);
    expect(result.errors).toEqual([]);
    expect(result.successful).toBe(6);
    expect(answeredBy).toHaveLength(6);
    expect(count(answeredBy, '127.0.0.2')).toBeGreaterThan(0);
    expect(count(answeredBy, '127.0.0.3')).toBeGreaterThan(0);
  }, 60_000);

  it('calls a phone registered through Kamailio from either node, through its Path', async () => {
    for (const node of [nodes.a, nodes.b]) node.gateway.sip.setTrace(true);
    const phone = await startBaresip({
      username: endpoint.username,
      password: endpoint.password,
      registrar: kamailio,
      answerMode: 'auto',
    });
    try {
      await phone.waitForRegistered();
      const stored = await nodes.a.gateway.state.registrations.get(ID, `endpoint:${endpoint.id}`);
      const binding = stored!.bindings[0]!;
      // Kamailio's add_path_received(): its own address, and where the phone registered from
      expect(binding.path).toHaveLength(1);
      expect(binding.path![0]).toMatch(
        new RegExp(
          `^<sip:127\\.0\\.0\\.1:${kamailio.port};.*received=sip:127\\.0\\.0\\.1:${phone.sipPort}`,
        ),
      );
      // The node that took the authenticated REGISTER, and the other one.
      const registeredAt = [nodes.a, nodes.b].find((node) =>
        traced(node, 'SIP received').some(
          (m) => m.message.startsWith('REGISTER ') && /^Authorization: /m.test(m.message),
        ),
      )!;
      expect(registeredAt).toBeDefined();
      const other = registeredAt === nodes.a ? nodes.b : nodes.a;
      app.serve('/call-answer', { body: '<Response><Speak>Found you.</Speak></Response>' });
      for (const node of [other, registeredAt]) {
        const host = node === nodes.a ? '127.0.0.2' : '127.0.0.3';
        const hangup = `/hangup-${host}`;
        const placed = await node.request('POST', `/v1/Account/${ID}/Call/`, {
          json: {
            from: '+14155550100',
            to: `sip:${endpoint.username}@${host}`,
            answer_url: `${app.baseUrl}/call-answer`,
            hangup_url: `${app.baseUrl}${hangup}`,
          },
        });
        expect(placed.status).toBe(201);
        await until(() => app.requestsTo(hangup).length > 0, 20_000);
        expect(app.requestsTo(hangup)[0]!.params).toMatchObject({ CallStatus: 'completed' });
        // The INVITE went to Kamailio, with the Path as its Route, not to the phone.
        const invite = traced(node, 'SIP sent').find((m) => m.message.startsWith('INVITE '))!;
        expect(invite.peer).toBe(`UDP 127.0.0.1:${kamailio.port}`);
        expect(invite.message).toContain(`INVITE sip:${endpoint.username}`);
        expect(invite.message).toContain(`\r\nRoute: ${binding.path![0]}\r\n`);
        node.logs.length = 0;
      }
      const established = phone.output().match(/Call established/gi) ?? [];
      expect(established).toHaveLength(2);
    } finally {
      for (const node of [nodes.a, nodes.b]) node.gateway.sip.setTrace(false);
      await phone.stop();
    }
  }, 90_000);

  it('calls a sip.js phone registered over WebSocket through Kamailio from either node', async () => {
    const media = await RtpPeer.open();
    const phone = await startSipjsPhone({
      server: `ws://127.0.0.1:${kamailio.wsPort}`,
      aor: `sip:${webEndpoint.username}@127.0.0.1`,
      username: webEndpoint.username,
      password: webEndpoint.password,
      rtpPort: media.port,
    });
    try {
      await phone.register();
      const stored = await nodes.a.gateway.state.registrations.get(
        ID,
        `endpoint:${webEndpoint.id}`,
      );
      const binding = stored!.bindings[0]!;
      // The contact is the client's .invalid one (RFC 7118); the Path names its connection.
      expect(binding.contact).toMatch(/\.invalid/);
      expect(binding.path![0]).toMatch(/received=sip:127\.0\.0\.1:\d+%3Btransport%3Dws>$/);
      app.serve('/web-answer', { body: '<Response><Speak>Hello browser.</Speak></Response>' });
      for (const [node, host] of [
        [nodes.b, '127.0.0.3'],
        [nodes.a, '127.0.0.2'],
      ] as const) {
        const hangup = `/web-hangup-${host}`;
        const placed = await node.request('POST', `/v1/Account/${ID}/Call/`, {
          json: {
            from: '+14155550100',
            to: `sip:${webEndpoint.username}@${host}`,
            answer_url: `${app.baseUrl}/web-answer`,
            hangup_url: `${app.baseUrl}${hangup}`,
          },
        });
        expect(placed.status).toBe(201);
        await until(() => app.requestsTo(hangup).length > 0, 20_000);
        expect(app.requestsTo(hangup)[0]!.params).toMatchObject({ CallStatus: 'completed' });
      }
      // Both calls were answered by the phone, and both ended with the gateway's BYE, which
      // reached it through Kamailio over its WebSocket.
      await until(() => phone.calls.every((c) => c.includes(SessionState.Terminated)), 5000);
      expect(phone.calls).toEqual([
        [SessionState.Establishing, SessionState.Established, SessionState.Terminated],
        [SessionState.Establishing, SessionState.Established, SessionState.Terminated],
      ]);
      expect(phone.invites[0]!.request.getHeader('Record-Route')).toContain('transport=ws');
    } finally {
      await phone.stop();
      await media.close();
    }
  }, 60_000);

  it('fails over to the next node on a 503, and on a node that does not answer', async () => {
    // A node that is up (its probes succeed) but refuses calls, and a node that is gone.
    const refusing = await startSippUas({ scenario: 'node-unavailable.xml', traceMessages: true });
    const gone = { host: '127.0.0.4', port: await freePort() };
    const b = sipOf(nodes.b, '127.0.0.3');
    // No probe in the test's time: only the failover marks a node down here.
    const front = await startKamailio({ nodes: [refusing, gone, b], pingIntervalS: 300 });
    try {
      const started = Date.now();
      const { result, answeredBy } = await callThrough(front, 3);
      expect(result.errors).toEqual([]);
      expect(result.successful).toBe(3);
      expect(answeredBy).toEqual(['127.0.0.3', '127.0.0.3', '127.0.0.3']);
      // the gone node cost one failover timeout (1.5 s), once
      expect(Date.now() - started).toBeGreaterThan(1500);
      const states = Object.fromEntries(
        (await front.dispatcherList()).map((entry) => [entry.uri, entry.flags]),
      );
      expect(states).toMatchObject({
        [nodeUri(refusing)]: 'IP',
        [nodeUri(gone)]: 'IP',
        [nodeUri(b)]: expect.stringMatching(/^A/),
      });
      expect(front.output()).toMatch(/answered 503 to INVITE: node marked inactive/);
      expect(front.output()).toMatch(/did not answer INVITE: node marked inactive/);
    } finally {
      await front.stop();
      const seen = await refusing.stop();
      expect(seen.messages).toContain('SIP/2.0 503 Service Unavailable');
    }
  }, 60_000);

  it('probes a stopped node out, and an operator reload replaces it with a new node', async () => {
    const a = sipOf(nodes.a, '127.0.0.2');
    const b = sipOf(nodes.b, '127.0.0.3');
    await nodes.a.close();
    closed.add(nodes.a);
    // Calls placed at once still all connect: to B, directly or after the timeout on A.
    const atOnce = await callThrough(kamailio, 4);
    expect(atOnce.result.successful).toBe(4);
    expect(count(atOnce.answeredBy, '127.0.0.3')).toBe(4);
    await kamailio.waitForStates({ [nodeUri(a)]: 'IP', [nodeUri(b)]: 'AP' });
    // Once probed out, no call waits for it: none fails over any more.
    const logged = kamailio.output().length;
    const probedOut = await callThrough(kamailio, 2);
    expect(probedOut.answeredBy).toEqual(['127.0.0.3', '127.0.0.3']);
    expect(kamailio.output().slice(logged)).not.toMatch(/did not answer|failed over/);
    expect(probedOut.result.errors).toEqual([]);

    // The operator takes A out of the list, adds a new node C and reloads.
    const c = await startNode('127.0.0.2');
    extra.push(c);
    const cSip = sipOf(c, '127.0.0.2');
    await kamailio.setNodes([b, cSip]);
    await kamailio.waitForStates({ [nodeUri(b)]: 'AP', [nodeUri(cSip)]: 'AP' });
    expect((await kamailio.dispatcherList()).map((entry) => entry.uri).sort()).toEqual(
      [nodeUri(b), nodeUri(cSip)].sort(),
    );
    const spread = await callThrough(kamailio, 4);
    expect(spread.result.successful).toBe(4);
    expect(count(spread.answeredBy, '127.0.0.2')).toBeGreaterThan(0);
    expect(count(spread.answeredBy, '127.0.0.3')).toBeGreaterThan(0);
  }, 90_000);
});
