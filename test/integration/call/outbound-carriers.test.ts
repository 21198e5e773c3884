import { createHash } from 'node:crypto';
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { muLawDecode } from '../../../src/media/codec/g711.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/**
 * Calls to phone numbers through SIP carriers (VOXGATE_CARRIER_URI, VOXGATE_CARRIERS_FILE):
 * SIPp plays each carrier (challenging, refusing, answering), a plain RTP peer its media.
 */
let app: ClientApp;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];
const gateways: TestGateway[] = [];
const dir = mkdtempSync(join(tmpdir(), 'voxgate-carriers-'));

beforeAll(async () => {
  app = await ClientApp.start();
});

afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
  await Promise.all(carriers.splice(0).map((c) => c.stop()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
  app.reset();
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

async function carrier(scenario: string, variables: Record<string, string> = {}) {
  const uas = await startSippUas({ scenario, variables, traceMessages: true });
  carriers.push(uas);
  return uas;
}

async function mediaServer(): Promise<RtpPeer> {
  const peer = await RtpPeer.open();
  peers.push(peer);
  return peer;
}

async function gateway(env: Record<string, string>): Promise<TestGateway> {
  const gw = await startGateway({ listen: true, env });
  gateways.push(gw);
  return gw;
}

let files = 0;
function carriersFile(document: unknown): string {
  const path = join(dir, `carriers-${++files}.json`);
  writeFileSync(path, JSON.stringify(document));
  return path;
}

const local = (uas: SippUas) => ({ host: '127.0.0.1', port: uas.port, transport: 'udp' });

async function call(gw: TestGateway, to: string, xml = '<Response><Hangup/></Response>') {
  app.serve('/answer', { body: xml });
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

const invitesIn = (messages: string) => (messages.match(/^INVITE sip:/gm) ?? []).length;
const md5 = (text: string) => createHash('md5').update(text).digest('hex');
const warnings = (gw: TestGateway) =>
  gw.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((l) => l.level === 40);

function expectNoSecret(gw: TestGateway, ...secrets: string[]) {
  for (const secret of secrets) {
    expect(gw.logs.join('\n')).not.toContain(secret);
    for (const request of app.received) expect(request.body + request.url).not.toContain(secret);
  }
}

describe('VOXGATE_CARRIER_URI with credentials', () => {
  it('answers the carrier 401 with the URI user and password', async () => {
    const uas = await carrier('carrier-auth.xml');
    const gw = await gateway({
      VOXGATE_CARRIER_URI: `sip:carrieruser:Carrier-Pass1@127.0.0.1:${uas.port}`,
    });
    expect(await call(gw, '+14155550199')).toMatchObject({
      HangupCauseCode: '4000',
      CallStatus: 'completed',
    });
    const result = await uas.stop();
    expect(result).toMatchObject({ successful: 1, failed: 0, errors: [] });
    expect(invitesIn(result.messages)).toBe(2);
    expectNoSecret(gw, 'Carrier-Pass1');
    // The metrics page shows no credential either.
    const metrics = await gw.request('GET', '/metrics');
    expect(metrics.text).not.toContain('Carrier-Pass1');
  }, 30_000);

  it('answers a 407 in Proxy-Authorization with a digest of the URI password', async () => {
    const uas = await carrier('carrier-proxy-auth.xml');
    const gw = await gateway({
      VOXGATE_CARRIER_URI: `sip:carrieruser:Carrier-Pass1@127.0.0.1:${uas.port}`,
    });
    expect(await call(gw, '+14155550199')).toMatchObject({ HangupCauseCode: '4000' });
    // The hangup callback may come before SIPp has answered the BYE and counted the call.
    await uas.settled(1);
    const { messages, errors, successful } = await uas.stop();
    expect({ errors, successful }).toEqual({ errors: [], successful: 1 });
    const header = /^Proxy-Authorization: Digest (.*)$/m.exec(messages)![1]!;
    const param = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(header)![1]!;
    expect(param('username')).toBe('carrieruser');
    expect(param('realm')).toBe('carrier.test');
    const ha1 = md5(`carrieruser:carrier.test:Carrier-Pass1`);
    const ha2 = md5(`INVITE:${param('uri')}`);
    expect(param('response')).toBe(md5(`${ha1}:${param('nonce')}:${ha2}`));
    expectNoSecret(gw, 'Carrier-Pass1');
  }, 30_000);

  it('answers a 401 to its BYE with the URI credentials', async () => {
    const uas = await carrier('carrier-bye-auth.xml');
    const gw = await gateway({
      VOXGATE_CARRIER_URI: `sip:carrieruser:Carrier-Pass1@127.0.0.1:${uas.port}`,
    });
    expect(await call(gw, '+14155550199')).toMatchObject({ HangupCauseCode: '4000' });
    await uas.settled(1);
    expect(await uas.stop()).toMatchObject({ successful: 1, failed: 0, errors: [] });
  }, 30_000);

  it('ends 4240 after one retry when the carrier refuses the password, with a warn line naming it', async () => {
    const uas = await carrier('carrier-auth.xml');
    const gw = await gateway({
      VOXGATE_CARRIER_URI: `sip:carrieruser:Wrong-Pass1@127.0.0.1:${uas.port}`,
    });
    expect(await call(gw, '+14155550199')).toMatchObject({
      HangupCauseCode: '4240',
      HangupCauseName: 'sip_auth_failed',
      CallStatus: 'failed',
    });
    const result = await uas.stop();
    // The first INVITE and one with credentials: no loop.
    expect(invitesIn(result.messages)).toBe(2);
    const refused = warnings(gw).filter((l) => /refused our credentials/.test(String(l.msg)));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ carrier: 'default', status: 401 });
    expectNoSecret(gw, 'Wrong-Pass1');
  }, 30_000);
});

describe('VOXGATE_CARRIERS_FILE', () => {
  it('fails over from a carrier answering 503 to the next, whose media flows', async () => {
    const down = await carrier('carrier-unavailable.xml');
    const media = await mediaServer();
    const up = await carrier('carrier-answer.xml', { rtp_port: String(media.port) });
    const file = carriersFile({
      carriers: [
        { name: 'first', gateways: [local(down)], prefixes: ['1'], priority: 0 },
        { name: 'second', gateways: [local(up)], prefixes: ['1'], priority: 1 },
      ],
    });
    const gw = await gateway({ VOXGATE_CARRIERS_FILE: file });
    const hangup = await call(
      gw,
      '+14155550199',
      '<Response><Speak>Thank you for calling the test line.</Speak></Response>',
    );
    expect(hangup).toMatchObject({ HangupCauseCode: '4010', CallStatus: 'completed' });
    const heard = muLawDecode(
      Buffer.concat(media.received.filter((p) => p.payloadType === 0).map((p) => p.payload)),
    );
    expect(heard.length).toBeGreaterThan(8000);
    const rms = Math.sqrt(heard.reduce((s, v) => s + v * v, 0) / heard.length);
    expect(rms).toBeGreaterThan(300);
    const [first, second] = [await down.stop(), await up.stop()];
    expect(invitesIn(first.messages)).toBe(1);
    expect(second).toMatchObject({ successful: 1, errors: [] });
  }, 30_000);

  it("ends on the first carrier's 486 without trying the next", async () => {
    const busy = await carrier('carrier-busy.xml');
    const next = await carrier('carrier-answer.xml', { rtp_port: '9' });
    const file = carriersFile({
      carriers: [
        { name: 'first', gateways: [local(busy)], priority: 0 },
        { name: 'second', gateways: [local(next)], priority: 1 },
      ],
    });
    const gw = await gateway({ VOXGATE_CARRIERS_FILE: file });
    expect(await call(gw, '+14155550199')).toMatchObject({
      HangupCauseCode: '3010',
      CallStatus: 'busy',
    });
    expect(invitesIn((await busy.stop()).messages)).toBe(1);
    expect(invitesIn((await next.stop()).messages)).toBe(0);
  }, 30_000);

  it('writes the number without + for a carrier with e164_plus false; as dialled otherwise', async () => {
    const media = await mediaServer();
    const national = await carrier('carrier-no-plus.xml', { rtp_port: String(media.port) });
    const asDialled = await carrier('carrier-no-plus.xml', { rtp_port: String(media.port) });
    const file = carriersFile({
      carriers: [
        { name: 'us', gateways: [local(national)], prefixes: ['1'], e164_plus: false },
        { name: 'uk', gateways: [local(asDialled)], prefixes: ['44'] },
      ],
    });
    const gw = await gateway({ VOXGATE_CARRIERS_FILE: file });
    expect(await call(gw, '+14155550199')).toMatchObject({ HangupCauseCode: '4000' });
    expect(await call(gw, '+442071234567')).toMatchObject({
      HangupCauseCode: '3050',
      CallStatus: 'failed',
    });
    await national.settled(1);
    const [us, uk] = [await national.stop(), await asDialled.stop()];
    expect(us.messages).toMatch(/^INVITE sip:14155550199@127\.0\.0\.1/m);
    expect(us).toMatchObject({ successful: 1, errors: [] });
    expect(uk.messages).toMatch(/^INVITE sip:\+442071234567@127\.0\.0\.1/m);
    expect(invitesIn(uk.messages)).toBe(1);
  }, 30_000);

  it('answers a 407 with the credentials of the file, and never logs the password', async () => {
    const uas = await carrier('carrier-proxy-auth.xml');
    const file = carriersFile({
      carriers: [
        {
          name: 'secure',
          gateways: [local(uas)],
          auth: { username: 'carrieruser', password: 'File-Pass-7', realm: 'carrier.test' },
        },
      ],
    });
    const gw = await gateway({ VOXGATE_CARRIERS_FILE: file });
    expect(await call(gw, '+14155550199')).toMatchObject({ HangupCauseCode: '4000' });
    await uas.settled(1);
    const { messages, successful } = await uas.stop();
    expect(successful).toBe(1);
    const header = /^Proxy-Authorization: Digest (.*)$/m.exec(messages)![1]!;
    const param = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(header)![1]!;
    const ha1 = md5('carrieruser:carrier.test:File-Pass-7');
    const ha2 = md5(`INVITE:${param('uri')}`);
    expect(param('response')).toBe(md5(`${ha1}:${param('nonce')}:${ha2}`));
    expectNoSecret(gw, 'File-Pass-7');
  }, 30_000);

  it('ends 5020 with a warn line naming the number when no carrier takes it', async () => {
    const uas = await carrier('carrier-answer.xml', { rtp_port: '9' });
    const file = carriersFile({
      carriers: [{ name: 'uk', gateways: [local(uas)], prefixes: ['44'] }],
    });
    const gw = await gateway({ VOXGATE_CARRIERS_FILE: file });
    expect(await call(gw, '+14155550199')).toMatchObject({
      HangupCauseCode: '5020',
      HangupCauseName: 'Routing Error',
    });
    const line = warnings(gw).find((l) => String(l.msg).startsWith('no carrier takes'));
    expect(line).toMatchObject({
      to: '+14155550199',
      msg: 'no carrier takes +14155550199: no carrier has a prefix that matches it',
    });
    expect(invitesIn((await uas.stop()).messages)).toBe(0);
  }, 30_000);

  it('skips a carrier whose gateway fails its OPTIONS probes, and calls the next at once', async () => {
    // A host that takes UDP and never answers: its probes go unanswered.
    const silent = createSocket('udp4');
    const received: string[] = [];
    silent.on('message', (data) => received.push(data.toString('latin1')));
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const pbx = await carrier('pbx-probed.xml');
      const file = carriersFile({
        carriers: [
          { name: 'first', gateways: [{ host: '127.0.0.1', port }], priority: 0 },
          { name: 'second', gateways: [local(pbx)], priority: 1 },
        ],
      });
      const gw = await gateway({
        VOXGATE_CARRIERS_FILE: file,
        VOXGATE_CARRIER_PROBE_INTERVAL: '1',
      });
      await until(
        () => warnings(gw).some((l) => l.carrier === 'first' && /is down/.test(String(l.msg))),
        10_000,
      );
      expect(await call(gw, '+14155550199')).toMatchObject({ HangupCauseCode: '4000' });
      expect(received.length).toBeGreaterThanOrEqual(2);
      expect(received.every((m) => m.startsWith('OPTIONS '))).toBe(true);
      expect((await pbx.stop()).messages).toMatch(/^INVITE sip:\+14155550199@127\.0\.0\.1/m);
    } finally {
      silent.close();
    }
  }, 30_000);
});
