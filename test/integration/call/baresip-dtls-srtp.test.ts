import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startBaresip, type Baresip } from '../../support/baresip.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { StreamServer } from '../../support/stream-server.js';
import { strongestFrequency, tone } from '../../support/signal.js';
import { makeTestCertificate, type TestCertificate } from '../../support/tls-certificate.js';
import { until } from '../../support/wait.js';

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

/** Plays 1 kHz to the stream's call; resolves to 1 s of the phone's sound from its start. */
async function streamTones(connection: number): Promise<Int16Array> {
  const ws = await bot.connection(connection);
  await until(() => ws.of('start').length === 1, 15_000);
  const back = tone(16000, 1000, 3, 8000);
  for (let at = 0; at < back.length; at += 1600) {
    ws.send({
      event: 'playAudio',
      media: {
        contentType: 'audio/x-l16',
        sampleRate: 16000,
        payload: Buffer.from(back.buffer, at * 2, 3200).toString('base64'),
      },
    });
  }
  const samples = () => {
    const heard = Buffer.concat(ws.payloads('inbound'));
    const pcm = new Int16Array(heard.length >> 1);
    for (let i = 0; i < pcm.length; i++) pcm[i] = heard.readInt16LE(i * 2);
    return pcm;
  };
  const loudAt = (pcm: Int16Array) => pcm.findIndex((s) => Math.abs(s) > 1000);
  await until(() => {
    const pcm = samples();
    return loudAt(pcm) >= 0 && pcm.length >= loudAt(pcm) + 3200 + 16000;
  }, 15_000);
  const pcm = samples();
  return pcm.subarray(loudAt(pcm) + 3200, loudAt(pcm) + 19200);
}

/** The strongest frequency baresip decoded, from its -dec WAV dump. */
async function decodedByPhone(): Promise<number> {
  const files = await readdir(dumps);
  const decoded = files.find((name) => name.includes('-dec'));
  expect(decoded, `dumps: ${files.join(', ')}`).toBeDefined();
  const file = await readFile(join(dumps, decoded!));
  await rm(join(dumps, decoded!));
  const rate = file.readUInt32LE(24);
  const channels = file.readUInt16LE(22);
  let at = 12;
  while (file.toString('ascii', at, at + 4) !== 'data') at += 8 + file.readUInt32LE(at + 4);
  const data = file.subarray(at + 8, at + 8 + file.readUInt32LE(at + 4));
  const pcm = new Int16Array(data.length / 2 / channels);
  for (let i = 0; i < pcm.length; i++) pcm[i] = data.readInt16LE(i * 2 * channels);
  const loud = pcm.findIndex((s) => Math.abs(s) > 2000);
  return strongestFrequency(pcm.subarray(loud + rate / 5, loud + rate / 5 + rate), rate, 10);
}

const traced = () => gw.logs.join('\n');

describe('baresip with DTLS-SRTP, ICE and rtcp-mux over SIP over TLS', () => {
  it('calls in: ICE-lite, DTLS-SRTP and audio both ways', async () => {
    app.serve('/answer', { body: STREAM_XML.replace('URL', bot.url) });
    const caller = await phone([`/dial sip:14155550123@127.0.0.1:${tlsPort}`]);
    const heard = await streamTones(0);
    expect(strongestFrequency(heard, 16000, 10)).toBe(440);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await caller.stop();
    phones.length = 0;
    expect(await decodedByPhone()).toBe(1000);
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
    const heard = await streamTones(1);
    expect(strongestFrequency(heard, 16000, 10)).toBe(440);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await callee.stop();
    phones.length = 0;
    expect(await decodedByPhone()).toBe(1000);
    const offer = gw.logs
      .map((line) => JSON.parse(line) as { direction?: string; message?: string })
      .find((e) => e.direction === 'out' && e.message?.startsWith('INVITE '))!.message!;
    expect(offer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF /m);
    expect(offer).toMatch(/^a=ice-lite/m);
    expect(offer).toMatch(/^a=fingerprint:sha-256 /m);
  }, 40_000);
});
