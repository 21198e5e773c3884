import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startBaresip, type Baresip } from '../../support/baresip.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { registerEndpoint, udpChannel } from '../../support/sip-registration.js';
import { StreamServer } from '../../support/stream-server.js';
import { exchangeTones, strongestDecodedHz } from '../../support/phone-audio.js';
import { strongestFrequency } from '../../support/signal.js';
import { until } from '../../support/wait.js';
import { makeTestCertificate, type TestCertificate } from '../../support/tls-certificate.js';

/**
 * SDES-SRTP (RFC 4568) with baresip over SIP over TLS: it calls in and is called with
 * RTP/SAVP and a=crypto (`mediaenc=srtp-mand`); the endpoint's application forks the call to a
 * stream server, which hears baresip's 440 Hz decrypted and plays 1 kHz that baresip decrypts
 * and writes to a WAV file. Offers the gateway must refuse are checked on the wire.
 */
let gw: TestGateway;
let app: ClientApp;
let bot: StreamServer;
let certificate: TestCertificate;
let dumps: string;
let tlsPort: number;
const phones: Baresip[] = [];
const endpoints: Record<string, { id: string; username: string; password: string }> = {};

beforeAll(async () => {
  certificate = await makeTestCertificate();
  app = await ClientApp.start();
  bot = await StreamServer.start();
  dumps = await mkdtemp(join(tmpdir(), 'voxgate-sdes-'));
  gw = await startGateway({
    listen: true,
    env: {
      VOXGATE_SIP_TLS_CERT: certificate.certPath,
      VOXGATE_SIP_TLS_KEY: certificate.keyPath,
      VOXGATE_SIP_TLS_PORT: '0',
      VOXGATE_SIP_TRACE: 'true',
    },
  });
  tlsPort = gw.gateway.sip.addresses.tls!.port;
  const application = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
    json: { app_name: 'srtp', answer_url: `${app.baseUrl}/answer` },
  });
  for (const [name, srtp] of [
    ['optional', 'optional'],
    ['required', 'required'],
  ] as const) {
    const password = `${name}-Secret1`;
    const res = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
      json: { username: name, password, alias: name, app_id: application.body.app_id, srtp },
    });
    expect(res.status).toBe(201);
    endpoints[name] = { id: res.body.endpoint_id, username: res.body.username, password };
  }
}, 30_000);

afterEach(async () => {
  await Promise.all(phones.splice(0).map((p) => p.stop()));
  app.reset();
});

afterAll(async () => {
  await gw?.close();
  await app?.close();
  await bot?.close();
  await certificate?.remove();
  await rm(dumps, { recursive: true, force: true });
});

const STREAM_XML =
  '<Response><Stream bidirectional="true" keepCallAlive="true" ' +
  `contentType="audio/x-l16;rate=8000">URL</Stream></Response>`;

async function phone(name: string, options: Partial<Parameters<typeof startBaresip>[0]> = {}) {
  const { username, password } = endpoints[name]!;
  const started = await startBaresip({
    username,
    password,
    registrar: { host: '127.0.0.1', port: tlsPort },
    transport: 'tls',
    answerMode: 'auto',
    configLines: [
      'module srtp.so',
      'module sndfile.so',
      `snd_path ${dumps}`,
      `sip_cafile ${certificate.certPath}`,
    ],
    accountParams: ['mediaenc=srtp-mand'],
    ...options,
  });
  phones.push(started);
  return started;
}

/** The SIP trace lines the gateway logged (its SDP included), as one text. */
const traced = () => gw.logs.join('\n');

describe('SDES-SRTP with baresip over SIP over TLS', () => {
  it('takes a call offering RTP/SAVP: the answer carries its own key and the audio flows both ways', async () => {
    app.serve('/answer', { body: STREAM_XML.replace('URL', bot.url) });
    const caller = await phone('optional', {
      commands: [`/dial sip:14155550123@127.0.0.1:${tlsPort}`],
    });
    const heard = await exchangeTones(bot, 0, { rate: 8000, hz: 1000 });
    expect(strongestFrequency(heard, 8000, 10)).toBe(440);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await caller.stop();
    phones.length = 0;
    expect(await strongestDecodedHz(dumps)).toBe(1000);
    // On the wire: RTP/SAVP both ways, one a=crypto in the answer; no key in any log line.
    const log = traced();
    expect(log).toMatch(/m=audio \d+ RTP\/SAVP /);
    expect(log).toMatch(/a=crypto:\d+ AES_CM_128_HMAC_SHA1_(80|32) inline:<redacted>/);
    expect(log).not.toMatch(/inline:[A-Za-z0-9+/]{40}/);
  }, 40_000);

  it('calls an endpoint that requires SRTP with RTP/SAVP and both suites, and the audio flows', async () => {
    const callee = await phone('required');
    await callee.waitForRegistered();
    app.serve('/answer', { body: STREAM_XML.replace('URL', bot.url) });
    const placed = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
      json: {
        from: '+14155550100',
        to: `sip:${endpoints.required!.username}@127.0.0.1`,
        answer_url: `${app.baseUrl}/answer`,
      },
    });
    expect(placed.status).toBe(201);
    const heard = await exchangeTones(bot, 1, { rate: 8000, hz: 1000 });
    expect(strongestFrequency(heard, 8000, 10)).toBe(440);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await callee.stop();
    phones.length = 0;
    expect(await strongestDecodedHz(dumps)).toBe(1000);
    const invite = traced().match(/INVITE sip:[^\n]*[\s\S]*?m=audio \d+ (\S+)[\s\S]*?(?=\\n\\n|$)/);
    expect(invite?.[1]).toBe('RTP/SAVP');
    expect(traced()).toContain('a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:<redacted>');
  }, 40_000);

  it('refuses 488 a plain RTP offer from an endpoint that requires SRTP', async () => {
    const caller = await phone('required', {
      accountParams: [],
      commands: [`/dial sip:14155550123@127.0.0.1:${tlsPort}`],
    });
    // A word of its own: the endpoint's username is random digits, which may hold "488".
    const line = await caller.waitForLine(/\b488\b/, 10_000);
    expect(line).toMatch(/488 .*RTP\/SAVP \(SRTP is required on this leg\)/);
  }, 20_000);

  it('rings with its keys only the registrations reached over TLS, not one in the clear', async () => {
    const clear = await udpChannel(gw.gateway.sip.addresses.udp.port);
    const endpoint = endpoints.required!;
    try {
      expect((await registerEndpoint(clear, endpoint)).status).toBe(200);
      // Registered last and for longer: the newest registration, the one whose offer is made.
      const callee = await phone('required');
      await callee.waitForRegistered();
      app.serve('/answer', { body: '<Response><Wait length="10"/></Response>' });
      const placed = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
        json: {
          from: '+14155550100',
          to: `sip:${endpoint.username}@127.0.0.1`,
          answer_url: `${app.baseUrl}/answer`,
        },
      });
      expect(placed.status).toBe(201);
      await until(() => app.requestsTo('/answer').length === 1, 10_000);
      const uuid = app.requestsTo('/answer')[0]!.params.CallUUID!;
      expect(traced()).toMatch(
        new RegExp(`INVITE sip:${endpoint.username}[^@\\s]*@127\\.0\\.0\\.1:\\d+;transport=tls`),
      );
      expect(traced()).not.toContain(`INVITE sip:${endpoint.username}@${clear.sentBy}`);
      await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/${uuid}/`);
    } finally {
      await registerEndpoint(clear, endpoint, { expires: 0 });
      clear.close();
    }
  }, 30_000);
});

/** An INVITE from outside to an endpoint's SIP URI, with `sdp` as its offer. */
function invite(transport: 'UDP' | 'TLS', port: number, sdp: string): string {
  const branch = `z9hG4bK${randomBytes(6).toString('hex')}`;
  const callId = randomBytes(8).toString('hex');
  return [
    `INVITE sip:${endpoints.optional!.username}@127.0.0.1 SIP/2.0`,
    `Via: SIP/2.0/${transport} 127.0.0.1:${port};branch=${branch};rport`,
    'Max-Forwards: 70',
    `From: <sip:outsider@198.51.100.9>;tag=${callId.slice(0, 6)}`,
    `To: <sip:${endpoints.optional!.username}@127.0.0.1>`,
    `Call-ID: ${callId}`,
    'CSeq: 1 INVITE',
    `Contact: <sip:outsider@127.0.0.1:${port}>`,
    'Content-Type: application/sdp',
    `Content-Length: ${Buffer.byteLength(sdp)}`,
    '',
    sdp,
  ].join('\r\n');
}

const savp = (crypto: string) =>
  [
    'v=0',
    'o=- 1 1 IN IP4 127.0.0.1',
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    'm=audio 41000 RTP/SAVP 0',
    'a=rtpmap:0 PCMU/8000',
    `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${crypto}`,
    '',
  ].join('\r\n');

/** The first final response the gateway sends back. */
function finalResponse(responses: string[]): string | undefined {
  return responses.find((r) => /^SIP\/2\.0 [2-6]\d\d /.test(r));
}

describe('SDES offers the gateway refuses', () => {
  it('answers 488 with a Warning an RTP/SAVP offer over UDP, keys in the clear', async () => {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const responses: string[] = [];
    socket.on('message', (data) => responses.push(data.toString()));
    const body = savp(randomBytes(30).toString('base64'));
    socket.send(invite('UDP', socket.address().port, body), gw.gateway.sip.addresses.udp.port);
    await until(() => finalResponse(responses) !== undefined, 5000);
    socket.close();
    const response = finalResponse(responses)!;
    expect(response).toMatch(
      /^SIP\/2\.0 488 SDES-SRTP keys \(a=crypto\) are taken only over SIP over TLS\r\n/,
    );
    expect(response).toMatch(
      /\r\nWarning: 399 127\.0\.0\.1 "SDES-SRTP keys \(a=crypto\) are taken only over SIP over TLS"\r\n/,
    );
  });

  it('answers 488 over TLS an offer whose only key is 20 bytes long', async () => {
    const socket = connect({ host: '127.0.0.1', port: tlsPort, ca: certificate.cert });
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    const responses: string[] = [];
    socket.on('data', (data: Buffer) => responses.push(...data.toString().split(/(?=SIP\/2\.0 )/)));
    socket.write(invite('TLS', socket.localPort!, savp(randomBytes(20).toString('base64'))));
    await until(() => finalResponse(responses) !== undefined, 5000);
    socket.destroy();
    expect(finalResponse(responses)).toMatch(
      /^SIP\/2\.0 488 no usable a=crypto line \(a=crypto:1: AES_CM_128_HMAC_SHA1_80 takes 30 bytes of key and salt, not 20\)\r\n/,
    );
  });
});
