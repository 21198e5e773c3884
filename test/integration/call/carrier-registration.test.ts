import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { runSipp, startSippUas, type SippUas, type SippUasOptions } from '../../support/sipp.js';
import { sleep, until } from '../../support/wait.js';

/**
 * Outbound REGISTER for carriers with `register` (VOXGATE_CARRIERS_FILE): SIPp plays the
 * carrier's registrar, which challenges, grants a short expires and takes calls only from a
 * registered account; another refuses every REGISTER; one is killed and started again.
 */
let app: ClientApp;
const sipps: SippUas[] = [];
const peers: RtpPeer[] = [];
const gateways: TestGateway[] = [];
const dir = mkdtempSync(join(tmpdir(), 'voxgate-register-'));

beforeAll(async () => {
  app = await ClientApp.start();
});

afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
  await Promise.all(sipps.splice(0).map((c) => c.stop()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
  app.reset();
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

const PASSWORD = 'Carrier-Pass1';
const AUTH = { username: 'carrieruser', password: PASSWORD };

async function sipp(scenario: string, options: Partial<SippUasOptions> = {}) {
  const uas = await startSippUas({ scenario, traceMessages: true, ...options });
  sipps.push(uas);
  return uas;
}

/** The registrar that takes calls once registered, granting `grant` seconds. */
async function registrar(grant: number, rtpPort = 9, port?: number) {
  return sipp('carrier-registrar.xml', {
    variables: { registered: 'no', grant: String(grant), rtp_port: String(rtpPort) },
    ...(port !== undefined && { port }),
  });
}

async function gateway(carriers: unknown[], env: Record<string, string> = {}) {
  const path = join(dir, `carriers-${gateways.length}-${Date.now()}.json`);
  writeFileSync(path, JSON.stringify({ carriers }));
  const gw = await startGateway({ listen: true, env: { VOXGATE_CARRIERS_FILE: path, ...env } });
  gateways.push(gw);
  return gw;
}

const local = (uas: SippUas) => ({ host: '127.0.0.1', port: uas.port, transport: 'udp' });

async function call(gw: TestGateway, to: string) {
  app.serve('/answer', { body: '<Response><Wait length="1"/><Hangup/></Response>' });
  const before = app.requestsTo('/hangup').length;
  const fired = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
    json: {
      from: '+14155550100',
      to,
      answer_url: `${app.baseUrl}/answer`,
      hangup_url: `${app.baseUrl}/hangup`,
    },
  });
  expect(fired.status).toBe(201);
  await until(() => app.requestsTo('/hangup').length > before, 20_000);
  return app.requestsTo('/hangup')[before]!.params;
}

/** A metric's value for one carrier on /metrics, or null when the series is absent. */
async function metric(gw: TestGateway, name: string, carrier: string): Promise<number | null> {
  const { text } = await gw.request('GET', '/metrics');
  const line = text.split('\n').find((l) => l.startsWith(`${name}{carrier="${carrier}"}`));
  return line === undefined ? null : Number(line.split(' ').pop());
}

const logLines = (gw: TestGateway) =>
  gw.logs.map((line) => JSON.parse(line) as Record<string, unknown>);

/** The requests SIPp received, in order, from its message trace. */
function received(messages: string, method: string): string[] {
  return messages
    .split(/^-{20,}.*$/m)
    .filter((block) => /message received/.test(block))
    .map((block) => block.slice(block.search(/^[A-Z]+ \S+ SIP\/2\.0/m)))
    .filter((text) => text.startsWith(`${method} `));
}

const header = (message: string, name: string) =>
  new RegExp(`^${name}: *(.*?)\\r?$`, 'mi').exec(message)?.[1] ?? null;
const md5 = (text: string) => createHash('md5').update(text).digest('hex');

function expectNoSecret(gw: TestGateway, metrics: string) {
  expect(gw.logs.join('\n')).not.toContain(PASSWORD);
  expect(metrics).not.toContain(PASSWORD);
  for (const request of app.received) expect(request.body + request.url).not.toContain(PASSWORD);
}

describe('carrier registration', () => {
  it('registers with digest, refreshes on the granted expires, calls through, and unregisters', async () => {
    const media = await RtpPeer.open();
    peers.push(media);
    const uas = await registrar(4, media.port);
    const gw = await gateway([
      { name: 'regco', gateways: [local(uas)], auth: AUTH, register: { expires: 600 } },
    ]);
    const sipPort = gw.gateway.sip.addresses.udp.port;
    await until(async () => (await metric(gw, 'voxgate_carrier_registered', 'regco')) === 1, 5000);
    // Granted 4 s, refreshed every 2 s: two refreshes before the call.
    await sleep(4500);
    expect(await metric(gw, 'voxgate_carrier_registered', 'regco')).toBe(1);
    expect(await call(gw, '+14155550199')).toMatchObject({
      HangupCauseCode: '4000',
      CallStatus: 'completed',
    });
    const { text: metrics } = await gw.request('GET', '/metrics');
    expect(metrics).toContain('voxgate_carrier_register_failures_total{carrier="regco"} 0');
    await uas.settled(1);
    await gw.close();
    gateways.splice(0);
    const result = await uas.stop();
    expect(result.errors).toEqual([]);
    expect(result.successful).toBe(1); // the call; the registration's SIPp call never ends

    const registers = received(result.messages, 'REGISTER');
    const callIds = new Set(registers.map((r) => header(r, 'Call-ID')));
    expect(callIds.size).toBe(1);
    const cseqs = registers.map((r) => Number(header(r, 'CSeq')!.split(' ')[0]));
    expect(cseqs).toEqual(cseqs.map((_, k) => cseqs[0]! + k));
    for (const register of registers) {
      expect(register).toMatch(
        new RegExp(`^REGISTER sip:127\\.0\\.0\\.1:${uas.port};transport=udp SIP/2\\.0`),
      );
      expect(header(register, 'To')).toBe('<sip:carrieruser@127.0.0.1>');
      expect(header(register, 'Contact')).toBe(`<sip:carrieruser@127.0.0.1:${sipPort}>`);
    }
    const plain = registers.filter((r) => header(r, 'Authorization') === null);
    const signed = registers.filter((r) => header(r, 'Authorization') !== null);
    // Each REGISTER is challenged once and answered once.
    expect(plain.length).toBe(signed.length);
    const expires = signed.map((r) => header(r, 'Expires'));
    expect(expires.at(-1)).toBe('0'); // the unregistration at close
    expect(expires.slice(0, -1).every((e) => e === '600')).toBe(true);
    expect(expires.length).toBeGreaterThanOrEqual(4); // the first, 2+ refreshes, the removal
    for (const register of signed) {
      const digest = header(register, 'Authorization')!;
      const param = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(digest)![1]!;
      expect(param('username')).toBe('carrieruser');
      const ha1 = md5(`carrieruser:carrier.test:${PASSWORD}`);
      const ha2 = md5(`REGISTER:${param('uri')}`);
      expect(param('response')).toBe(md5(`${ha1}:${param('nonce')}:${ha2}`));
    }
    expect(received(result.messages, 'INVITE')).toHaveLength(1);
    const registered = logLines(gw).filter((l) => /carrier regco registered/.test(String(l.msg)));
    expect(registered).toHaveLength(1);
    expect(logLines(gw).some((l) => l.msg === 'carrier regco unregistered')).toBe(true);
    expectNoSecret(gw, metrics);
  }, 40_000);

  it('retries a refusing registrar with backoff, skips the carrier and fails over', async () => {
    const refusing = await sipp('registrar-refuse.xml');
    const backup = await sipp('carrier-answer.xml', { variables: { rtp_port: '9' } });
    const gw = await gateway([
      {
        name: 'refused',
        gateways: [local(refusing)],
        auth: AUTH,
        prefixes: ['1', '44'],
        register: { expires: 600 },
      },
      { name: 'backup', gateways: [local(backup)], prefixes: ['1'] },
    ]);
    const failures = () =>
      logLines(gw).filter((l) => /carrier refused registration failed/.test(String(l.msg)));
    // Attempts at 0, 2 and 6 s (the backoff doubles from 2 s), the fourth not before 14 s.
    await until(() => failures().length >= 3, 10_000);
    expect(await metric(gw, 'voxgate_carrier_registered', 'refused')).toBe(0);
    expect(await metric(gw, 'voxgate_carrier_register_failures_total', 'refused')).toBe(3);
    expect(failures().map((l) => [l.status, l.retryInS, l.level])).toEqual([
      [403, 2, 40],
      [403, 4, 40],
      [403, 8, 40],
    ]);

    // +1: the refused carrier is skipped for the backup; +44: no other carrier takes it.
    expect(await call(gw, '+14155550199')).toMatchObject({ HangupCauseCode: '4000' });
    expect(await call(gw, '+442071234567')).toMatchObject({
      HangupCauseCode: '5020',
      CallStatus: 'failed',
    });
    const noCarrier = logLines(gw).find((l) =>
      /no carrier takes \+442071234567/.test(String(l.msg)),
    );
    expect(String(noCarrier?.msg)).toContain('carrier refused is not registered');
    const refused = await refusing.stop();
    expect(received(refused.messages, 'REGISTER')).toHaveLength(3);
    expect(received(refused.messages, 'INVITE')).toHaveLength(0);
    // The hangup callback may come before SIPp has answered the BYE and counted the call.
    await backup.settled(1);
    expect((await backup.stop()).successful).toBe(1);
  }, 40_000);

  it('names a carrier without credentials that the registrar challenges, and does not loop', async () => {
    const uas = await registrar(60);
    const gw = await gateway([
      { name: 'bare', gateways: [local(uas)], register: { user: 'carrieruser', expires: 60 } },
    ]);
    const warned = () =>
      logLines(gw).filter((l) => /carrier bare registration failed/.test(String(l.msg)));
    await until(() => warned().length >= 1, 5000);
    expect(warned()[0]).toMatchObject({ carrier: 'bare', status: 401, attempt: 1 });
    expect(String(warned()[0]!.msg)).toContain(
      'asks for credentials (401) and the carrier has none',
    );
    await sleep(500);
    const result = await uas.stop();
    expect(received(result.messages, 'REGISTER')).toHaveLength(1);
    expect(await metric(gw, 'voxgate_carrier_registered', 'bare')).toBe(0);
  }, 20_000);

  it('registers again once a registrar that went away is back', async () => {
    let uas = await registrar(2);
    const gw = await gateway(
      [{ name: 'flaky', gateways: [local(uas)], auth: AUTH, register: { expires: 60 } }],
      { VOXGATE_CARRIER_RESPONSE_TIMEOUT: '1' },
    );
    const registered = () => metric(gw, 'voxgate_carrier_registered', 'flaky');
    await until(async () => (await registered()) === 1, 5000);
    const port = uas.port;
    await uas.stop();
    // The refresh goes unanswered (counted) and the 2 s binding lapses.
    const failures = () => metric(gw, 'voxgate_carrier_register_failures_total', 'flaky');
    await until(async () => (await registered()) === 0 && (await failures())! >= 1, 6000);
    uas = await registrar(2, 9, port);
    await until(async () => (await registered()) === 1, 10_000);
    const logs = logLines(gw).filter((l) => /carrier flaky registered/.test(String(l.msg)));
    expect(logs).toHaveLength(2);
    const again = await uas.stop();
    expect(received(again.messages, 'REGISTER').length).toBeGreaterThanOrEqual(2);
  }, 40_000);

  it("takes the carrier's calls to the registered Contact as calls to the number in To", async () => {
    const uas = await registrar(60);
    const gw = await gateway([
      { name: 'regco', gateways: [local(uas)], auth: AUTH, register: { expires: 600 } },
    ]);
    const application = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
      json: {
        app_name: 'desk',
        answer_url: `${app.baseUrl}/answer`,
        hangup_url: `${app.baseUrl}/hangup`,
      },
    });
    const added = await gw.request('POST', `/v1/Account/${gw.main.id}/Number/`, {
      json: {
        numbers: '14155550123',
        carrier: 'regco',
        region: 'West',
        app_id: application.body.app_id,
      },
    });
    expect(added.status).toBeLessThan(300);
    app.serve('/answer', { body: '<Response><Wait length="10"/></Response>' });
    await until(async () => (await metric(gw, 'voxgate_carrier_registered', 'regco')) === 1, 5000);
    const result = await runSipp({
      scenario: 'carrier-call-in.xml',
      target: { host: '127.0.0.1', port: gw.gateway.sip.addresses.udp.port },
      calls: 1,
      variables: { number: '14155550123' },
      extraArgs: ['-s', 'carrieruser', '-d', '500'],
    });
    expect(result).toMatchObject({ errors: [], successful: 1 });
    expect(app.requestsTo('/answer')[0]?.params).toMatchObject({
      Direction: 'inbound',
      To: '14155550123',
      From: '+14155550100',
    });
  }, 30_000);
});
