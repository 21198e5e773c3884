import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startBaresip, type Baresip } from '../../support/baresip.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { StreamServer } from '../../support/stream-server.js';
import { exchangeTones, strongestDecodedHz } from '../../support/phone-audio.js';
import { strongestFrequency } from '../../support/signal.js';
import { makeTestCertificate, type TestCertificate } from '../../support/tls-certificate.js';

/**
 * baresip with its DTLS-SRTP, ICE and rtcp-mux (`mediaenc=dtls_srtpf`, `medianat=ice`,
 * `rtcp_mux yes`) over SIP over TLS: what a native SIP softphone sends when it speaks WebRTC's
 * media. It calls in and is called; the endpoint's application forks the call to a stream
 * server, which hears baresip's 440 Hz and plays 1 kHz that baresip decodes to a WAV file.
 */
let gw: TestGateway;
let app: ClientApp;
let bot: StreamServer;
let certificate: TestCertificate;
let dumps: string;
let tlsPort: number;
let endpoint: { id: string; username: string; password: string };
const phones: Baresip[] = [];

beforeAll(async () => {
  certificate = await makeTestCertificate();
  app = await ClientApp.start();
  bot = await StreamServer.start();
  dumps = await mkdtemp(join(tmpdir(), 'voxgate-dtls-srtp-'));
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
    json: { app_name: 'dtls-srtp', answer_url: `${app.baseUrl}/answer` },
  });
  const password = 'dtls-Secret1';
  const res = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
    json: {
      username: 'dtlsphone',
      password,
      alias: 'dtls',
      app_id: application.body.app_id,
      srtp: 'dtls',
    },
  });
  expect(res.status).toBe(201);
  endpoint = { id: res.body.endpoint_id, username: res.body.username, password };
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
  'contentType="audio/x-l16;rate=16000">URL</Stream></Response>';

async function phone(commands: string[] = []): Promise<Baresip> {
  const started = await startBaresip({
    username: endpoint.username,
    password: endpoint.password,
    registrar: { host: '127.0.0.1', port: tlsPort },
    transport: 'tls',
    answerMode: 'auto',
    configLines: [
      'module dtls_srtp.so',
      'module ice.so',
      'module sndfile.so',
      'rtcp_mux yes',
      `snd_path ${dumps}`,
      `sip_cafile ${certificate.certPath}`,
    ],
    accountParams: ['mediaenc=dtls_srtp', 'medianat=ice'],
    commands,
  });
  phones.push(started);
  return started;
}

const traced = () => gw.logs.join('\n');

describe('baresip with DTLS-SRTP, ICE and rtcp-mux over SIP over TLS', () => {
  it('calls in: ICE-lite, DTLS-SRTP and audio both ways', async () => {
    app.serve('/answer', { body: STREAM_XML.replace('URL', bot.url) });
    const caller = await phone([`/dial sip:14155550123@127.0.0.1:${tlsPort}`]);
    const heard = await exchangeTones(bot, 0, { rate: 16000, hz: 1000 });
    expect(strongestFrequency(heard, 16000, 10)).toBe(440);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await caller.stop();
    phones.length = 0;
    expect(await strongestDecodedHz(dumps)).toBe(1000);
    expect(traced()).toMatch(/m=audio \d+ UDP\/TLS\/RTP\/SAVPF /);
  }, 40_000);

  it('is called with an ICE-lite, DTLS-SRTP offer (srtp: dtls), and audio flows both ways', async () => {
    const callee = await phone();
    await callee.waitForRegistered();
    app.serve('/answer', { body: STREAM_XML.replace('URL', bot.url) });
    const placed = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
      json: {
        from: '+14155550100',
        to: `sip:${endpoint.username}@127.0.0.1`,
        answer_url: `${app.baseUrl}/answer`,
      },
    });
    expect(placed.status).toBe(201);
    const heard = await exchangeTones(bot, 1, { rate: 16000, hz: 1000 });
    expect(strongestFrequency(heard, 16000, 10)).toBe(440);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await callee.stop();
    phones.length = 0;
    expect(await strongestDecodedHz(dumps)).toBe(1000);
    const offer = gw.logs
      .map((line) => JSON.parse(line) as { direction?: string; message?: string })
      .find((e) => e.direction === 'out' && e.message?.startsWith('INVITE '))!.message!;
    expect(offer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF /m);
    expect(offer).toMatch(/^a=ice-lite/m);
    expect(offer).toMatch(/^a=fingerprint:sha-256 /m);
  }, 40_000);
});
