import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startBaresip, type Baresip } from '../../support/baresip.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { runSipp } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/**
 * Endpoints made through the API, with baresip as the softphone: it is called (POST Call/ to
 * its SIP URI, and a SIPp caller dialling that URI), and it calls out through its application.
 */
let gw: TestGateway;
let app: ClientApp;
let target: { host: string; port: number };
const phones: Baresip[] = [];
const endpoints: Record<string, { id: string; username: string; password: string }> = {};

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({ listen: true });
  target = { host: '127.0.0.1', port: gw.gateway.sip.addresses.udp.port };
  const application = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
    json: {
      app_name: 'softphones',
      answer_url: `${app.baseUrl}/endpoint-answer`,
      hangup_url: `${app.baseUrl}/hangup`,
    },
  });
  for (const name of ['alice', 'bob']) {
    const password = `${name}-Secret1`;
    const res = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
      json: { username: name, password, alias: name, app_id: application.body.app_id },
    });
    expect(res.status).toBe(201);
    endpoints[name] = { id: res.body.endpoint_id, username: res.body.username, password };
  }
});

afterEach(async () => {
  await Promise.all(phones.splice(0).map((p) => p.stop()));
  app.reset();
});

afterAll(async () => {
  await gw.close();
  await app.close();
});

async function phone(name: string, extra: Partial<Parameters<typeof startBaresip>[0]> = {}) {
  const { username, password } = endpoints[name]!;
  const started = await startBaresip({
    username,
    password,
    registrar: target,
    answerMode: 'auto',
    ...extra,
  });
  phones.push(started);
  return started;
}

async function hangup() {
  await until(() => app.requestsTo('/hangup').length > 0, 15_000);
  return app.requestsTo('/hangup')[0]!.params;
}

describe('calls to and from endpoints', () => {
  it('rings a registered endpoint at its contact when a call is placed to its SIP URI', async () => {
    const alice = await phone('alice');
    await alice.waitForRegistered();
    app.serve('/answer', { body: '<Response><Speak>Hello from the gateway.</Speak></Response>' });
    const placed = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
      json: {
        from: '+14155550100',
        to: `sip:${endpoints.alice!.username}@127.0.0.1`,
        answer_url: `${app.baseUrl}/answer`,
        hangup_url: `${app.baseUrl}/hangup`,
      },
    });
    expect(placed.status).toBe(201);
    expect(await hangup()).toMatchObject({ CallStatus: 'completed', HangupCauseCode: '4010' });
    await alice.waitForLine(/Call established/i);
  }, 30_000);

  it('ends a call to an endpoint that is not registered with 2020', async () => {
    await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
      json: {
        from: '+14155550100',
        to: `sip:${endpoints.bob!.username}@127.0.0.1`,
        answer_url: `${app.baseUrl}/answer`,
        hangup_url: `${app.baseUrl}/hangup`,
      },
    });
    expect(await hangup()).toMatchObject({
      HangupCauseCode: '2020',
      HangupCauseName: 'Endpoint Not Registered',
      CallStatus: 'failed',
    });
  });

  it('connects a SIPp caller dialling the endpoint URI straight to the registered phone', async () => {
    const alice = await phone('alice');
    await alice.waitForRegistered();
    const result = await runSipp({
      scenario: 'uac-invite.xml',
      target,
      calls: 1,
      extraArgs: ['-s', endpoints.alice!.username, '-d', '1000'],
    });
    expect(result.errors).toEqual([]);
    expect(result.successful).toBe(1);
    await alice.waitForLine(/Call established/i);
  }, 30_000);

  it("runs the endpoint's application when it calls out, after digest authentication", async () => {
    app.serve('/endpoint-answer', {
      body: '<Response><Speak>You called out.</Speak><Hangup/></Response>',
    });
    const alice = await phone('alice', {
      commands: ['/dial sip:14155550123@127.0.0.1:' + target.port],
    });
    await alice.waitForRegistered();
    const params = await hangup();
    const answer = app.requestsTo('/endpoint-answer')[0]!.params;
    expect(answer).toMatchObject({
      Direction: 'inbound',
      From: endpoints.alice!.username,
      To: '14155550123',
    });
    expect(params).toMatchObject({ HangupCauseCode: '4000', HangupSource: 'Answer XML' });
  }, 30_000);
});
