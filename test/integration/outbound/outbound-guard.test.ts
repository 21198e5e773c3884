import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import type { RtpPeer } from '../../support/rtp-peer.js';
import type { SippUas } from '../../support/sipp.js';
import { StreamServer } from '../../support/stream-server.js';
import { until } from '../../support/wait.js';

/**
 * The outbound guard through the real gateway: tenant URLs at link-local addresses, at names
 * that resolve to them (from the gateway's host table: no DNS here), at the gateway's own port,
 * and behind a redirect are refused, at the REST request when they can be judged then and
 * otherwise with the failure the URL's use already has. The default profile lets the loopback
 * servers of the rest of the suite through; the shared profile refuses them.
 */
const hosts: Record<string, string[]> = {
  'metadata.test': ['169.254.169.254'],
  'mapped.test': ['::ffff:169.254.169.254'],
  // Answers loopback when the request is made, then changes its answer (DNS rebinding).
  'rebind.test': ['127.0.0.1'],
};
let gw: TestGateway;
let app: ClientApp;
let bot: StreamServer;
/** Answers every request with a redirect to where `redirectTo` says. */
let redirector: Server;
let redirectorUrl: string;
let redirectTo = '';
let redirected = 0;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  app = await ClientApp.start();
  bot = await StreamServer.start();
  gw = await startGateway({ listen: true, outboundHosts: hosts });
  redirector = createServer((_req, res) => {
    redirected++;
    res.writeHead(302, { Location: redirectTo }).end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
  redirectorUrl = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await Promise.all(carriers.splice(0).map((c) => c.stop()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
  app.reset();
  hosts['rebind.test'] = ['127.0.0.1'];
});

afterAll(async () => {
  await gw?.close();
  await app?.close();
  await bot?.close();
  await new Promise((resolve) => redirector?.close(resolve));
});

const gatewayPort = () => (gw.gateway.app.server.address() as AddressInfo).port;
const refusals = () =>
  gw.logs
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter(
      (entry) =>
        entry.msg === 'outbound request refused' || /^media: outbound/.test(String(entry.msg)),
    );

describe('URLs refused at the REST request (400)', () => {
  it.each([
    ['a link-local address', 'http://169.254.169.254/latest', 'link-local'],
    ['an IPv4-mapped link-local address', 'http://[::ffff:169.254.169.254]/latest', 'link-local'],
    ['a name resolving to a link-local address', 'http://metadata.test/latest', 'link-local'],
    ['a name resolving to a mapped link-local address', 'http://mapped.test/', 'link-local'],
    ['the unspecified address', 'http://0.0.0.0:9000/', 'unspecified'],
  ])('answer_url at %s: no application is created', async (_what, url, rule) => {
    const before = (await gw.request('GET', `/v1/Account/${gw.main.id}/Application/`)).body.meta
      .total_count as number;
    const created = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
      json: { app_name: 'metadata', answer_url: url },
    });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatch(
      new RegExp(`^invalid answer_url: .*refused by the outbound rule ${rule}$`),
    );
    const after = await gw.request('GET', `/v1/Account/${gw.main.id}/Application/`);
    expect(after.body.meta.total_count).toBe(before);
    expect(refusals().at(-1)).toMatchObject({ level: 40, rule });
  });

  it("refuses the gateway's own HTTP port, and an update to a refused hangup_url", async () => {
    const own = `http://127.0.0.1:${gatewayPort()}/v1/Account/${gw.main.id}/`;
    const created = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
      json: { app_name: 'self', answer_url: own },
    });
    expect(created.status).toBe(400);
    expect(created.body.error).toBe(
      `invalid answer_url: 127.0.0.1 port ${gatewayPort()} is one of the gateway's own listening ports: refused by the outbound rule own-port`,
    );
    const ok = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
      json: { app_name: 'fine', answer_url: `${app.baseUrl}/answer` },
    });
    expect(ok.status).toBe(201);
    const update = await gw.request(
      'POST',
      `/v1/Account/${gw.main.id}/Application/${ok.body.app_id}/`,
      { json: { hangup_url: 'http://169.254.169.254/hangup' } },
    );
    expect(update.status).toBe(400);
    expect(update.body.error).toMatch(/^invalid hangup_url: .*rule link-local$/);
    const kept = await gw.request(
      'GET',
      `/v1/Account/${gw.main.id}/Application/${ok.body.app_id}/`,
    );
    expect(kept.body.hangup_url).toBe(`${app.baseUrl}/answer`);
  });

  it('refuses the URLs of POST Call/, a stream, a message and its MMS media', async () => {
    const call = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
      json: {
        from: '+14155550100',
        to: '+14155550111',
        answer_url: `${app.baseUrl}/answer`,
        machine_detection_url: 'http://metadata.test/amd',
      },
    });
    expect(call.status).toBe(400);
    expect(call.body.error).toMatch(/^invalid machine_detection_url: metadata\.test resolves to/);
    expect(app.received).toHaveLength(0);

    const stream = await gw.request(
      'POST',
      `/v1/Account/${gw.main.id}/Call/0b6c1d4e-1111-4222-8333-444455556666/Stream/`,
      { json: { service_url: 'ws://[fe80::1]:8080/stream' } },
    );
    expect(stream.status).toBe(400);
    expect(stream.body.error).toMatch(/^invalid service_url: .*rule link-local$/);

    const message = await gw.request('POST', `/v1/Account/${gw.main.id}/Message/`, {
      json: {
        src: '+14155550100',
        dst: '+14155550111',
        text: 'hi',
        url: 'http://169.254.169.254/',
      },
    });
    expect(message.status).toBe(400);
    expect(message.body.error).toMatch(/^invalid url: .*rule link-local$/);
  });

  it('accepts a name that does not resolve yet, as before', async () => {
    const created = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
      json: { app_name: 'later', answer_url: 'http://not-yet.invalid/answer' },
    });
    expect(created.status).toBe(201);
  });
});

describe('URLs refused when they are used', () => {
  it('a name that rebinds to a link-local address after the request: 7011, no retry, the hangup callback undelivered', async () => {
    const seen = refusals().length;
    await placeCarrierCall({ gw, app, carriers, peers }, '<Response/>', {
      answer_url: 'http://rebind.test:1/answer',
      hangup_url: 'http://rebind.test:1/hangup?token=secret',
      fallback_url: `${redirectorUrl}/fallback`,
    });
    // Accepted while rebind.test answered loopback; it now answers the metadata address.
    hosts['rebind.test'] = ['169.254.169.254'];
    redirectTo = 'http://169.254.169.254/latest/meta-data/';
    redirected = 0;
    await until(async () => {
      const list = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/`);
      return list.body.objects[0]?.hangup_cause_code === 7011;
    }, 20_000);
    await until(() => gw.logs.some((line) => line.includes('callback failed: giving up')), 5000);
    // The answer URL once (no retries), then the hangup callback once (not retried either).
    expect(
      refusals()
        .slice(seen)
        .map((entry) => [entry.rule, entry.host, entry.url]),
    ).toEqual([
      ['link-local', 'rebind.test', 'http://rebind.test:1/answer'],
      ['link-local', 'rebind.test', 'http://rebind.test:1/hangup'],
    ]);
    // The fallback answered a redirect to the metadata address: never followed, a failure
    // tried again as any failed answer fetch is (three times).
    expect(redirected).toBe(3);
    const giveUp = gw.logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((entry) => entry.msg === 'callback failed: giving up');
    expect(giveUp).toMatchObject({ rule: 'link-local', attempts: 1 });
    expect(gw.logs.join('\n')).not.toContain('secret');
  }, 40_000);

  it('a Redirect to a name resolving to a link-local address ends the call with 7014', async () => {
    await placeCarrierCall(
      { gw, app, carriers, peers },
      '<Response><Redirect>http://metadata.test/next</Redirect></Response>',
      { hangup_url: `${app.baseUrl}/hangup` },
    );
    await until(() => app.requestsTo('/hangup').length === 1, 20_000);
    expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
      HangupCauseCode: '7014',
      HangupCauseName: 'Error Reaching Redirect URL',
    });
  }, 30_000);

  it('a Play whose file redirects to a refused address is skipped; the call runs on', async () => {
    redirectTo = `http://127.0.0.1:${gatewayPort()}/health`;
    redirected = 0;
    await placeCarrierCall(
      { gw, app, carriers, peers },
      `<Response><Play>${redirectorUrl}/prompt.wav</Play><Play>http://metadata.test/b.wav</Play><Hangup/></Response>`,
      { hangup_url: `${app.baseUrl}/hangup` },
    );
    await until(() => app.requestsTo('/hangup').length === 1, 20_000);
    expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({ HangupCauseCode: '4000' });
    expect(redirected).toBe(1);
    await until(() => refusals().filter((e) => /^media: /.test(String(e.msg))).length >= 2, 5000);
    const media = refusals().filter((e) => /^media: /.test(String(e.msg)));
    expect(media.map((e) => String(e.msg))).toEqual([
      expect.stringMatching(/^media: outbound request refused \(rule own-port\): /),
      expect.stringMatching(
        /^media: outbound request refused \(rule link-local\): .*metadata\.test/,
      ),
    ]);
  }, 30_000);

  it('a Stream whose service_url resolves to a refused address fails with the rule', async () => {
    const connections = bot.connections.length;
    await placeCarrierCall(
      { gw, app, carriers, peers },
      `<Response><Stream keepCallAlive="true" statusCallbackUrl="${app.baseUrl}/status">ws://metadata.test/stream</Stream><Hangup/></Response>`,
      { hangup_url: `${app.baseUrl}/hangup` },
    );
    await until(() => app.requestsTo('/status').length === 1, 20_000);
    expect(app.requestsTo('/status')[0]!.params).toMatchObject({
      Event: 'DroppedStream',
      Status: 'failed',
      Reason: expect.stringMatching(/^service_url is refused: .*rule link-local$/),
    });
    await until(() => app.requestsTo('/hangup').length === 1, 20_000);
    expect(bot.connections.length).toBe(connections);
  }, 30_000);
});

describe('the shared profile', () => {
  let shared: TestGateway;
  beforeAll(async () => {
    shared = await startGateway({ env: { VOXGATE_OUTBOUND_PROFILE: 'shared' } });
  });
  afterAll(async () => {
    await shared?.close();
  });

  it.each([
    [`http://127.0.0.1:9/answer`, 'loopback'],
    ['http://[::1]:9/answer', 'loopback'],
    ['http://10.1.2.3/answer', 'private'],
    ['http://192.168.0.10/answer', 'private'],
    ['http://100.64.0.1/answer', 'private'],
    ['http://169.254.169.254/latest', 'link-local'],
  ])('refuses %s (%s); the default profile takes loopback', async (url, rule) => {
    const created = await shared.request('POST', `/v1/Account/${shared.main.id}/Application/`, {
      json: { app_name: 'inside', answer_url: url },
    });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatch(new RegExp(`rule ${rule}( of the shared profile)?$`));
  });

  it('refuses a message status callback to a loopback server', async () => {
    const message = await shared.request('POST', `/v1/Account/${shared.main.id}/Message/`, {
      json: { src: '+14155550100', dst: '+14155550111', text: 'hi', url: `${app.baseUrl}/status` },
    });
    expect(message.status).toBe(400);
    expect(message.body.error).toMatch(/^invalid url: 127\.0\.0\.1 is a loopback address/);
  });
});
