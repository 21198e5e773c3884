import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { startBrowserPhone, type BrowserPhone } from '../../support/browser-phone.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { makeTestCertificate } from '../../support/tls-certificate.js';

/**
 * sip.js in a real headless Chromium against the in-process gateway over SIP/WebSocket
 * (RFC 7118), authenticating with access tokens from `JWT/Token/` (RFC 8898): what a browser
 * softphone built on the official token flow sees. Each test has a browser of its own.
 */
let gw: TestGateway;
let wsUrl: string;
let phone: BrowserPhone | null = null;

beforeAll(async () => {
  gw = await startGateway({ listen: true });
  wsUrl = `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;
});

afterEach(async () => {
  gw.gateway.sip.setTrace(false);
  await phone?.close();
  phone = null;
});

afterAll(async () => {
  await gw.close();
});

async function mint(sub: string, voice: Record<string, boolean>): Promise<string> {
  const res = await gw.request('POST', `/v1/Account/${gw.main.id}/JWT/Token/`, {
    json: { iss: gw.main.id, sub, per: { voice } },
  });
  expect(res.status).toBe(200);
  return res.body.token as string;
}

/** The SIP requests the gateway received with this method, as traced (credentials redacted). */
function received(method: string): string[] {
  return gw.logs
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.msg === 'SIP received' && entry.message.startsWith(`${method} `))
    .map((entry) => entry.message as string);
}

describe('sip.js in Chromium over WebSocket with a JWT access token', () => {
  it('registers: the registrar holds one WS binding for the token subject', async () => {
    phone = await startBrowserPhone();
    const token = await mint('browser-1', { incoming_allow: true, outgoing_allow: true });
    const ok = await phone.register(wsUrl, 'sip:browser-1@127.0.0.1', token);
    expect(ok.status).toBe(200);
    const stored = await gw.gateway.state.registrations.get(
      gw.main.id,
      `token:${gw.main.id}:browser-1`,
    );
    expect(stored?.bindings).toHaveLength(1);
    expect(stored?.bindings[0]).toMatchObject({ protocol: 'WS' });
    expect(phone.consoleErrors).toEqual([]);
  }, 30_000);

  it('is refused registration (403) by a token without incoming_allow, and nothing is bound', async () => {
    phone = await startBrowserPhone();
    const token = await mint('browser-2', { incoming_allow: false, outgoing_allow: true });
    await expect(phone.register(wsUrl, 'sip:browser-2@127.0.0.1', token)).rejects.toThrow(
      /REGISTER refused: 403/,
    );
    expect(
      await gw.gateway.state.registrations.get(gw.main.id, `token:${gw.main.id}:browser-2`),
    ).toBeNull();
    const refusals = gw.logs
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg === 'REGISTER refused');
    expect(refusals.map((entry) => entry.reason)).toContain('token does not allow incoming calls');
  }, 30_000);

  it('sends its INVITE with the token and a WebRTC offer (UDP/TLS/RTP/SAVPF), and it is let in', async () => {
    phone = await startBrowserPhone();
    const token = await mint('browser-3', { incoming_allow: true, outgoing_allow: true });
    await phone.register(wsUrl, 'sip:browser-3@127.0.0.1', token);
    const client = await ClientApp.start();
    client.serve('/answer', { body: '<Response><Speak>hello</Speak></Response>' });
    const app = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
      json: {
        app_name: 'browser',
        answer_url: `${client.baseUrl}/answer`,
        default_endpoint_app: true,
      },
    });
    expect(app.status).toBe(201);
    gw.gateway.sip.setTrace(true);
    const outcome = await phone.call('sip:echo@127.0.0.1');
    const invites = received('INVITE');
    expect(invites).toHaveLength(1);
    const invite = invites[0]!;
    expect(invite).toMatch(/^Authorization: <redacted>$/m);
    expect(invite).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF( \d+)+\r?$/m);
    expect(invite).toMatch(/^a=fingerprint:sha-256 [0-9A-F:]+\r?$/m);
    expect(invite).toMatch(/^a=rtpmap:\d+ opus\/48000\/2\r?$/m);
    expect(outcome.offer).not.toBeNull();
    expect(invite).toContain(
      outcome.offer!.split('\r\n').find((l) => l.startsWith('a=ice-ufrag:')),
    );
    // The token let it in and routing found the account's endpoint application: not an
    // authentication refusal (401/403/407) nor a routing one (404/480). What follows is the
    // media's business: until WebRTC legs are wired the gateway answers 488 to this offer; once
    // they are, a 2xx. Either is true to this test.
    expect([401, 403, 404, 407, 480]).not.toContain(outcome.status);
    expect(gw.logs.join('\n')).not.toContain(token);
    expect(phone.consoleErrors).toEqual([]);
    await client.close();
  }, 30_000);

  it('is refused the INVITE (403) by a token without outgoing_allow', async () => {
    phone = await startBrowserPhone();
    const token = await mint('browser-4', { incoming_allow: true, outgoing_allow: false });
    await phone.register(wsUrl, 'sip:browser-4@127.0.0.1', token);
    const outcome = await phone.call('sip:echo@127.0.0.1');
    expect(outcome).toMatchObject({ status: 403, answered: false });
    const refusals = gw.logs
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg === 'INVITE refused');
    expect(refusals.map((entry) => entry.reason)).toEqual(['token does not allow outgoing calls']);
    expect(phone.consoleErrors).toEqual([]);
  }, 30_000);
});

describe('sip.js in Chromium over secure WebSocket (WSS)', () => {
  it('registers through a TLS listener with a token: the binding is WSS', async () => {
    const certificate = await makeTestCertificate();
    const secure = await startGateway({
      listen: true,
      env: {
        VOXGATE_SIP_TLS_CERT: certificate.certPath,
        VOXGATE_SIP_TLS_KEY: certificate.keyPath,
        VOXGATE_SIP_TLS_PORT: '0',
      },
    });
    try {
      // The certificate is self-signed: the browser is told to trust it.
      phone = await startBrowserPhone({ acceptInsecureCertificates: true });
      const res = await secure.request('POST', `/v1/Account/${secure.main.id}/JWT/Token/`, {
        json: { sub: 'browser-5', per: { voice: { incoming_allow: true } } },
      });
      const url = `wss://127.0.0.1:${secure.gateway.sip.addresses.ws.port}`;
      expect((await phone.register(url, 'sip:browser-5@127.0.0.1', res.body.token)).status).toBe(
        200,
      );
      const stored = await secure.gateway.state.registrations.get(
        secure.main.id,
        `token:${secure.main.id}:browser-5`,
      );
      expect(stored?.bindings).toHaveLength(1);
      expect(stored?.bindings[0]).toMatchObject({ protocol: 'WSS' });
      expect(phone.consoleErrors).toEqual([]);
    } finally {
      await phone?.close();
      phone = null;
      await secure.close();
      await certificate.remove();
    }
  }, 30_000);
});
