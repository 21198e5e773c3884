import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { answeredCallUuid, hangUpAllCalls, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { RawUdpPeer } from '../../support/sip-client.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { StreamServer } from '../../support/stream-server.js';
import { until } from '../../support/wait.js';

/**
 * The per-account limits, set through the operator interface and enforced where the work
 * starts: a call beyond the concurrent calls ends with 5030 (an inbound one is answered 486), a
 * stream beyond the concurrent streams is refused with 429, calls beyond the calls per second
 * wait queued, messages beyond the messages per second wait in the send queue; two nodes on one
 * Redis count against the same limits.
 */
const OPERATOR = 'operator-token-for-limits-0123456789';
const US = '14155550100';
const UK = '447400123456';

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
  await app.close();
});

function setLimits(gw: TestGateway, authId: string, limits: Record<string, number | null>) {
  return gw.request('POST', `/operator/v1/Account/${authId}/Limits/`, {
    as: null,
    headers: { authorization: `Bearer ${OPERATOR}` },
    json: limits,
  });
}

const hangupsWith = (code: string) =>
  app.requestsTo('/hangup').filter((r) => r.params.HangupCauseCode === code);

async function metric(gw: TestGateway, account: string, limit: string): Promise<number> {
  const text = (await gw.gateway.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`voxgate_limit_hits_total{account="${account}",limit="${limit}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('account limits on one node', () => {
  let gw: TestGateway;
  let smsc: SmscSimulator;
  let streams: StreamServer;
  beforeAll(async () => {
    smsc = await SmscSimulator.start({ autoReceipt: 'DELIVRD' });
    streams = await StreamServer.start();
    gw = await startGateway({
      listen: true,
      env: { VOXGATE_OPERATOR_TOKEN: OPERATOR, VOXGATE_SMPP_URL: smsc.url('enquire_link=1') },
    });
  });
  afterEach(async () => {
    await hangUpAllCalls([gw]);
    await setLimits(gw, gw.main.id, {
      calls: null,
      calls_per_second: null,
      streams: null,
      messages_per_second: null,
    });
  });
  afterAll(async () => {
    await gw.close();
    await streams.close();
    await smsc.stop();
  });

  it('reads and sets limits through the operator interface only, and refuses bad values', async () => {
    const sub = await gw.subaccount('limited');
    const set = await setLimits(gw, sub.id, { calls: 3, messages_per_second: 10 });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      account: sub.id,
      limits: { calls: 3, calls_per_second: null, streams: null, messages_per_second: 10 },
      set: { calls: 3, calls_per_second: null, streams: null, messages_per_second: 10 },
    });
    const cleared = await setLimits(gw, sub.id, { calls: null });
    expect(cleared.body.set).toMatchObject({ calls: null, messages_per_second: 10 });
    // 0 clears as null does (as VOXGATE_LIMIT_*=0 means none).
    expect((await setLimits(gw, sub.id, { messages_per_second: 0 })).body.set).toMatchObject({
      messages_per_second: null,
    });
    for (const bad of [{ calls: 'many' }, { streams: 1.5 }, { calls: -1 }]) {
      expect((await setLimits(gw, sub.id, bad as never)).status).toBe(400);
    }
    expect((await setLimits(gw, 'SA00000000000000NONE', { calls: 1 })).status).toBe(404);
    // An account's own credentials do not open the operator interface.
    const asAccount = await gw.request('GET', `/operator/v1/Account/${sub.id}/Limits/`, {
      as: sub,
    });
    expect(asAccount.status).toBe(401);
    // The change is in the audit log, without any secret.
    const audit = gw.logs.filter((l) => l.includes('"audit":true'));
    expect(audit.some((l) => l.includes('account.limits.update') && l.includes(sub.id))).toBe(true);
    expect(audit.join('\n')).not.toContain(sub.token);
  });

  it("ends a subaccount's call beyond its concurrent calls with 5030, and admits one again once a call ends", async () => {
    const sub = await gw.subaccount('two-seats');
    expect((await setLimits(gw, sub.id, { calls: 1 })).status).toBe(200);
    const asSub = {
      ...gw,
      main: sub,
      request: (m, p, o = {}) => gw.request(m, p, { as: sub, ...o }),
    } as TestGateway;
    const wait = '<Response><Wait length="30"/></Response>';
    const hangupUrl = { hangup_url: `${app.baseUrl}/hangup` };
    const first = await placeCarrierCall({ gw: asSub, app, carriers, peers }, wait, hangupUrl);
    const firstUuid = await answeredCallUuid(app, first.requestUuid);
    await placeCarrierCall({ gw: asSub, app, carriers, peers }, wait, hangupUrl);
    await until(() => hangupsWith('5030').length === 1, 5000);
    const refused = hangupsWith('5030')[0]!.params;
    expect(refused).toMatchObject({
      HangupCauseName: 'Concurrency Limit Breached',
      HangupSource: 'Service',
      CallStatus: 'failed',
    });
    const record = await gw.request('GET', `/v1/Account/${sub.id}/Call/${refused.CallUUID}/`, {
      as: sub,
    });
    expect(record.body).toMatchObject({ hangup_cause_code: 5030, bill_duration: 0 });
    expect(await metric(gw, sub.id, 'calls')).toBe(1);
    // The main account's own calls are not limited by its subaccount's limit.
    const mains = await placeCarrierCall({ gw, app, carriers, peers }, wait, hangupUrl);
    await answeredCallUuid(app, mains.requestUuid);

    expect((await asSub.request('DELETE', `/v1/Account/${sub.id}/Call/${firstUuid}/`)).status).toBe(
      204,
    );
    await until(() => app.requestsTo('/hangup').some((r) => r.params.CallUUID === firstUuid), 5000);
    const again = await placeCarrierCall({ gw: asSub, app, carriers, peers }, wait, hangupUrl);
    await answeredCallUuid(app, again.requestUuid);
    expect(hangupsWith('5030')).toHaveLength(1);
  });

  it('answers an inbound call beyond the concurrent calls 486, with a 5030 record and hangup callback', async () => {
    const application = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
      json: {
        app_name: 'desk',
        answer_url: `${app.baseUrl}/answer`,
        hangup_url: `${app.baseUrl}/hangup`,
      },
    });
    await gw.request('POST', `/v1/Account/${gw.main.id}/Number/`, {
      json: { numbers: '14155550177', carrier: 'c', region: 'r', app_id: application.body.app_id },
    });
    expect((await setLimits(gw, gw.main.id, { calls: 1 })).status).toBe(200);
    const running = await placeCarrierCall(
      { gw, app, carriers, peers },
      '<Response><Wait length="30"/></Response>',
    );
    await answeredCallUuid(app, running.requestUuid);

    const caller = await RawUdpPeer.open();
    try {
      const sipPort = gw.gateway.sip.addresses.udp.port;
      caller.sendInvite({
        user: '14155550177',
        port: sipPort,
        from: '+14155550123',
        callId: 'limit-inbound-1',
      });
      await until(() => caller.finalResponse() !== undefined, 5000);
      expect(caller.finalResponse()!.status).toBe(486);
    } finally {
      caller.close();
    }
    expect(app.requestsTo('/answer').filter((r) => r.params.Direction === 'inbound')).toEqual([]);
    await until(() => hangupsWith('5030').length === 1, 5000);
    expect(hangupsWith('5030')[0]!.params).toMatchObject({
      Direction: 'inbound',
      To: '14155550177',
      HangupCauseName: 'Concurrency Limit Breached',
    });
  });

  it('refuses a REST stream beyond the concurrent streams with 429, and fails an XML one with the reason', async () => {
    expect((await setLimits(gw, gw.main.id, { streams: 1 })).status).toBe(200);
    const placed = await placeCarrierCall(
      { gw, app, carriers, peers },
      '<Response><Wait length="30"/></Response>',
    );
    const uuid = await answeredCallUuid(app, placed.requestUuid);
    const start = () =>
      gw.request('POST', `/v1/Account/${gw.main.id}/Call/${uuid}/Stream/`, {
        json: { service_url: streams.url, status_callback_url: `${app.baseUrl}/stream-status` },
      });
    const first = await start();
    expect(first.status).toBe(201);
    const second = await start();
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({
      api_id: expect.any(String),
      error: `account ${gw.main.id} has reached its limit of 1 concurrent audio streams`,
    });
    // Once the first stops, a stream may start again.
    const stop = await gw.request(
      'DELETE',
      `/v1/Account/${gw.main.id}/Call/${uuid}/Stream/${first.body.stream_id}/`,
    );
    expect(stop.status).toBe(204);
    expect((await start()).status).toBe(201);

    // An answer document's Stream beyond the limit: the stream fails at once, with the reason.
    const xmlCall = await placeCarrierCall(
      { gw, app, carriers, peers },
      `<Response><Stream statusCallbackUrl="${app.baseUrl}/xml-stream-status" keepCallAlive="true">${streams.url}</Stream></Response>`,
    );
    await answeredCallUuid(app, xmlCall.requestUuid);
    await until(() => app.requestsTo('/xml-stream-status').length > 0, 5000);
    expect(app.requestsTo('/xml-stream-status')[0]!.params).toMatchObject({
      Event: 'DroppedStream',
      Status: 'failed',
      Reason: `account ${gw.main.id} has reached its limit of 1 concurrent audio streams`,
    });
    expect(await metric(gw, gw.main.id, 'streams')).toBe(2);
  });

  it('holds calls beyond the calls per second queued, and dials them in the next seconds', async () => {
    expect((await setLimits(gw, gw.main.id, { calls_per_second: 2 })).status).toBe(200);
    const media = await RtpPeer.open();
    peers.push(media);
    const uas = await startSippUas({
      scenario: 'carrier-answer.xml',
      variables: { rtp_port: String(media.port) },
    });
    carriers.push(uas);
    app.serve('/answer', { body: '<Response><Hangup/></Response>' });
    const fired = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
      json: {
        from: '+14155550100',
        to: Array.from({ length: 5 }, () => `sip:alice@127.0.0.1:${uas.port}`).join('<'),
        answer_url: `${app.baseUrl}/answer`,
        hangup_url: `${app.baseUrl}/hangup`,
      },
    });
    expect(fired.status).toBe(201);
    // Two calls a second: the fifth goes in the third second, so it is still queued now.
    const queued = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/?status=queued`);
    expect(queued.body.calls.length).toBeGreaterThanOrEqual(1);
    const times: number[] = [];
    await until(() => {
      while (times.length < app.requestsTo('/answer').length) times.push(Date.now());
      return times.length === 5;
    }, 8000);
    // Five calls at two a second take three seconds' allowances: the last is dialled a second
    // or more after the first was (the margin is for the first call's own setup time).
    expect(times.at(-1)! - times[0]!).toBeGreaterThan(500);
    await until(() => hangupsWith('4000').length === 5, 5000);
    expect(await metric(gw, gw.main.id, 'calls_per_second')).toBeGreaterThan(0);
  });

  it('keeps messages beyond the messages per second in the queue and sends them all', async () => {
    expect((await setLimits(gw, gw.main.id, { messages_per_second: 2 })).status).toBe(200);
    await gw.request('POST', `/v1/Account/${gw.main.id}/Number/`, {
      json: { numbers: US, carrier: 'c', region: 'r' },
    });
    const before = smsc.submits.length;
    const sent = await gw.request('POST', `/v1/Account/${gw.main.id}/Message/`, {
      json: {
        src: US,
        dst: Array.from({ length: 6 }, (_, i) => `${UK.slice(0, -1)}${i}`).join('<'),
        text: 'paced',
      },
    });
    expect(sent.status).toBe(202);
    const times: number[] = [];
    await until(() => {
      while (times.length < smsc.submits.length - before) times.push(Date.now());
      return times.length === 6;
    }, 8000);
    // Six at two a second: the last goes a second or more after the first.
    expect(times.at(-1)! - times[0]!).toBeGreaterThan(500);
    for (const uuid of sent.body.message_uuid as string[]) {
      await until(
        async () =>
          (await gw.request('GET', `/v1/Account/${gw.main.id}/Message/${uuid}/`)).body
            .message_state === 'delivered',
        5000,
      );
    }
    expect(await metric(gw, gw.main.id, 'messages_per_second')).toBeGreaterThan(0);
  });
});

describe('account limits on two nodes sharing Redis', () => {
  let redis: RedisServer;
  let a: TestGateway;
  let b: TestGateway;
  beforeAll(async () => {
    redis = await startRedis();
    const env = { VOXGATE_OPERATOR_TOKEN: OPERATOR };
    a = await startGateway({
      redisUrl: redis.url,
      listen: true,
      env: { ...env, VOXGATE_NODE_ID: 'lim-a' },
    });
    b = await startGateway({
      redisUrl: redis.url,
      listen: true,
      env: { ...env, VOXGATE_NODE_ID: 'lim-b' },
    });
  });
  afterEach(() => hangUpAllCalls([a, b]));
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  it('admits exactly the configured number of concurrent calls across both nodes', async () => {
    expect((await setLimits(a, a.main.id, { calls: 2 })).status).toBe(200);
    const wait = '<Response><Wait length="30"/></Response>';
    const hangupUrl = { hangup_url: `${app.baseUrl}/hangup` };
    const first = await placeCarrierCall({ gw: a, app, carriers, peers }, wait, hangupUrl);
    await answeredCallUuid(app, first.requestUuid);
    const second = await placeCarrierCall({ gw: b, app, carriers, peers }, wait, hangupUrl);
    await answeredCallUuid(app, second.requestUuid);
    // One on each node (the second went to the less loaded one).
    const runsOn = (gw: TestGateway) => gw.gateway.calls.liveCount;
    expect([runsOn(a), runsOn(b)]).toEqual([1, 1]);
    await placeCarrierCall({ gw: b, app, carriers, peers }, wait, hangupUrl);
    await placeCarrierCall({ gw: a, app, carriers, peers }, wait, hangupUrl);
    await until(() => hangupsWith('5030').length === 2, 5000);
    expect(app.requestsTo('/answer')).toHaveLength(2);
    expect((await metric(a, a.main.id, 'calls')) + (await metric(b, b.main.id, 'calls'))).toBe(2);
  });
});
