import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBaresip, type Baresip } from '../../support/baresip.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { wavSamples } from '../../support/phone-audio.js';
import { StreamServer } from '../../support/stream-server.js';
import { strongestFrequency, tone } from '../../support/signal.js';
import { until } from '../../support/wait.js';

/**
 * baresip, with Opus as its only codec over plain RTP/AVP, calls the gateway through its
 * endpoint's application, whose answer XML forks the call to a stream server at 16 kHz. The
 * server hears baresip's 440 Hz tone decoded from Opus at 16 kHz, and plays a 5 kHz tone
 * back (above what a G.711 call carries), which baresip decodes and writes to a WAV file.
 */
let gw: TestGateway;
let app: ClientApp;
let bot: StreamServer;
let phone: Baresip | null = null;
let dumps: string;
let target: { host: string; port: number };
let endpoint: { username: string; password: string };

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({ listen: true });
  bot = await StreamServer.start();
  dumps = await mkdtemp(join(tmpdir(), 'voxgate-opus-'));
  target = { host: '127.0.0.1', port: gw.gateway.sip.addresses.udp.port };
  const application = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
    json: {
      app_name: 'opus-phones',
      answer_url: `${app.baseUrl}/answer`,
      hangup_url: `${app.baseUrl}/hangup`,
    },
  });
  const password = 'opus-Secret1';
  const res = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
    json: { username: 'opusphone', password, alias: 'opus', app_id: application.body.app_id },
  });
  expect(res.status).toBe(201);
  endpoint = { username: res.body.username, password };
});

afterAll(async () => {
  await phone?.stop();
  await gw?.close();
  await app?.close();
  await bot?.close();
  await rm(dumps, { recursive: true, force: true });
});

describe('a call in Opus', () => {
  it('carries wideband audio both ways between an Opus-only baresip and a 16 kHz stream', async () => {
    app.serve('/answer', {
      body:
        '<Response>' +
        `<Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-l16;rate=16000">${bot.url}</Stream>` +
        '</Response>',
    });
    phone = await startBaresip({
      ...endpoint,
      registrar: target,
      answerMode: 'auto',
      configLines: ['module opus.so', 'module sndfile.so', `snd_path ${dumps}`],
      accountParams: ['audio_codecs=opus/48000/2'],
      commands: [`/dial sip:14155550123@127.0.0.1:${target.port}`],
    });
    const ws = await bot.connection(0);
    await until(() => ws.of('start').length === 1, 10_000);
    expect(ws.of('start')[0]).toMatchObject({
      start: { mediaFormat: { encoding: 'audio/x-l16', sampleRate: 16000 } },
    });
    // Three seconds of 5 kHz back to the phone, in 100 ms chunks.
    ws.playL16(tone(16000, 5000, 3, 8000), 16000);
    await until(() => ws.payloads('inbound').length >= 150, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await phone.stop();
    phone = null;

    // What the gateway heard: baresip's 440 Hz, decoded from Opus at 16 kHz.
    const heard = Buffer.concat(ws.payloads('inbound'));
    const inbound = new Int16Array(heard.length >> 1);
    for (let i = 0; i < inbound.length; i++) inbound[i] = heard.readInt16LE(i * 2);
    const middle = inbound.subarray(16000, 32000);
    expect(strongestFrequency(middle, 16000, 10)).toBe(440);
    expect(ws.violations).toEqual([]);

    // What baresip decoded from the gateway's Opus: the 5 kHz tone.
    const files = await readdir(dumps);
    const decoded = files.find((name) => name.includes('-dec'));
    expect(decoded, `dumps: ${files.join(', ')}`).toBeDefined();
    const { rate, channels, pcm } = wavSamples(await readFile(join(dumps, decoded!)));
    const loud = pcm.findIndex((s) => Math.abs(s) > 2000);
    expect(loud).toBeGreaterThanOrEqual(0);
    const window = pcm.subarray(loud + rate / 5, loud + rate / 5 + rate);
    expect(window.length).toBe(rate);
    expect(
      strongestFrequency(window, rate, 10),
      `${decoded} ${rate} Hz ${channels} ch ${pcm.length} samples, loud from ${loud}: ${files.join(', ')}`,
    ).toBe(5000);
  }, 40_000);
});
