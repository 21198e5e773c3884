import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBaresip, type Baresip } from '../../support/baresip.js';
import { ClientApp, paramsOf } from '../../support/client-app.js';
import type { TestGateway } from '../../support/gateway.js';
import { wavSamples } from '../../support/phone-audio.js';
import { powerAt } from '../../support/signal.js';
import type { SipPeer } from '../../support/sip-peer.js';
import { ConferenceGateway } from '../../support/conference-gateway.js';
import { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * baresip (a softphone nobody here wrote, playing its 440 Hz tone over G.711) meets two tone
 * phones of the project's own in a room: each side hears the others and not itself, baresip's
 * side measured on the audio it decoded and wrote to a WAV file.
 */
const NUMBER = '14155550122';
const BARESIP_HZ = 440;
const TONES = [500, 1300];
const LOUD = 1e6;
const QUIET = 1e4;
let gw: TestGateway;
let app: ClientApp;
let sip: SipPeer;
let room: ConferenceGateway;
let phone: Baresip | null = null;
let dumps: string;
const phones: TonePhone[] = [];

beforeAll(async () => {
  room = await ConferenceGateway.start({ number: NUMBER, appName: 'mixed-peers' });
  ({ gw, app, sip } = room);
  dumps = await mkdtemp(join(tmpdir(), 'voxgate-conf-baresip-'));
  app.serve('/answer', {
    body: `<Response><Conference callbackUrl="${app.baseUrl}/events">mixed-peers</Conference></Response>`,
  });
});

afterAll(async () => {
  for (const p of phones) {
    await p.hangup();
    await p.close();
  }
  await phone?.stop();
  await room?.close();
  await rm(dumps, { recursive: true, force: true });
});

describe('baresip as a conference member', () => {
  it('hears the tone phones, and they hear it, none hearing itself', async () => {
    for (const [i, hz] of TONES.entries()) {
      phones.push(
        await TonePhone.call(
          sip,
          { user: NUMBER, port: gw.gateway.sip.addresses.udp.port, from: `tone${i}` },
          hz,
        ),
      );
    }
    const password = 'baresip-Secret1';
    const endpoint = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
      json: { username: 'confphone', password, alias: 'conf' },
    });
    expect(endpoint.status).toBe(201);
    const port = gw.gateway.sip.addresses.udp.port;
    phone = await startBaresip({
      username: endpoint.body.username,
      password,
      registrar: { host: '127.0.0.1', port },
      configLines: ['module sndfile.so', `snd_path ${dumps}`],
      commands: [`/dial sip:${NUMBER}@127.0.0.1:${port}`],
    });
    await until(() => app.requestsTo('/events').length === 3, 15_000);
    expect(app.requestsTo('/events').map((r) => paramsOf(r).ConferenceAction)).toEqual([
      'enter',
      'enter',
      'enter',
    ]);
    await sleep(500);
    const from = phones.map((p) => p.now);
    await sleep(1500);
    for (const [i, p] of phones.entries()) {
      const heard = p.heard(from[i]);
      expect(powerAt(heard, 8000, BARESIP_HZ), `tone${i} hears baresip`).toBeGreaterThan(LOUD);
      expect(powerAt(heard, 8000, TONES[1 - i]!), `tone${i} hears the other`).toBeGreaterThan(LOUD);
      expect(powerAt(heard, 8000, TONES[i]!), `tone${i} not itself`).toBeLessThan(QUIET);
    }
    // baresip's decoded audio: the last second written, both tone phones and not its own tone.
    await phone.stop();
    phone = null;
    const decoded = (await readdir(dumps)).filter((n) => n.includes('-dec')).sort();
    expect(decoded).toHaveLength(1);
    const { rate, pcm } = wavSamples(await readFile(join(dumps, decoded[0]!)));
    const second = pcm.subarray(pcm.length - rate - rate / 5, pcm.length - rate / 5);
    expect(second.length).toBe(rate);
    for (const hz of TONES) {
      expect(powerAt(second, rate, hz), `baresip hears ${hz} Hz`).toBeGreaterThan(LOUD);
    }
    expect(powerAt(second, rate, BARESIP_HZ), 'baresip not itself').toBeLessThan(QUIET);
  }, 60_000);
});
