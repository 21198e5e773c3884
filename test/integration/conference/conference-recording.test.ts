import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp, expectValidSignatures, paramsOf } from '../../support/client-app.js';
import { UUID, type TestGateway } from '../../support/gateway.js';
import { wavSamples } from '../../support/phone-audio.js';
import { powerAt } from '../../support/signal.js';
import type { SipPeer } from '../../support/sip-peer.js';
import { ConferenceGateway } from '../../support/conference-gateway.js';
import { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * Conference recordings on real calls: tone phones of the project's own meet in a room that
 * records (the Conference element's record, or the Conference API's Record); the stored file
 * is decoded and every member's tone is in it.
 */
const NUMBER = '14155550166';
const TONES = [500, 800, 1300];
const LOUD = 1e6;
let gw: TestGateway;
let app: ClientApp;
let sip: SipPeer;
let room: ConferenceGateway;
let dataDir: string;
const phones: TonePhone[] = [];
const run = promisify(execFile);

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'voxgate-conf-rec-'));
  room = await ConferenceGateway.start({
    number: NUMBER,
    appName: 'recorded-room',
    env: { VOXGATE_DATA_DIR: dataDir },
  });
  ({ gw, app, sip } = room);
});

afterEach(async () => {
  for (const phone of phones.splice(0)) {
    await phone.hangup();
    await phone.close();
  }
  app.reset();
});

afterAll(async () => {
  await room?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function enter(index: number): Promise<TonePhone> {
  const phone = await TonePhone.call(
    sip,
    { user: NUMBER, port: gw.gateway.sip.addresses.udp.port, from: `member${index}` },
    TONES[index]!,
  );
  phones.push(phone);
  return phone;
}

/** The power of each tone over a second of the recording from `atMs`. */
function tonesIn(pcm: Int16Array, rate: number, atMs: number): number[] {
  const from = (rate * atMs) / 1000;
  return TONES.map((hz) => powerAt(pcm.subarray(from, from + rate), rate, hz));
}

async function callback(path: string) {
  await until(() => app.requestsTo(path).length === 1, 20_000);
  const received = app.requestsTo(path)[0]!;
  expectValidSignatures(received, { accountToken: gw.main.token, mainToken: gw.main.token });
  return paramsOf(received);
}

describe('a conference recorded', () => {
  it('records the mix from the second member on when the Conference element asks (mp3)', async () => {
    app.serve('/answer', {
      body: `<Response><Conference record="true" callbackUrl="${app.baseUrl}/events">taped</Conference></Response>`,
    });
    await enter(0);
    // Alone: no recording yet (recordWhenAlone is false).
    await sleep(1000);
    const secondAt = Date.now();
    await enter(1);
    await enter(2);
    await sleep(2000);
    for (const phone of phones) await phone.hangup();
    const endedAt = Date.now();
    await until(
      () => app.requestsTo('/events').some((r) => paramsOf(r).ConferenceAction === 'record'),
      20_000,
    );
    const event = app.requestsTo('/events').find((r) => paramsOf(r).ConferenceAction === 'record')!;
    expectValidSignatures(event, { accountToken: gw.main.token, mainToken: gw.main.token });
    const params = paramsOf(event);
    expect(params).toEqual({
      ConferenceName: 'taped',
      ConferenceUUID: expect.stringMatching(UUID),
      ConferenceAction: 'record',
      RecordUrl: expect.stringMatching(/\/Recording\/[0-9a-f-]{36}\.mp3$/),
      RecordingID: expect.stringMatching(UUID),
      RecordingDuration: expect.stringMatching(/^\d+$/),
      RecordingDurationMs: expect.stringMatching(/^\d+\.00000$/),
      RecordingStartMs: expect.stringMatching(/^\d{13}\.00000$/),
      RecordingEndMs: expect.stringMatching(/^\d{13}\.00000$/),
      RecordingStatus: 'completed',
    });
    // It began with the second member, not with the first one alone.
    expect(Number(params.RecordingStartMs)).toBeGreaterThanOrEqual(secondAt - 20);
    expect(Number(params.RecordingDurationMs)).toBeLessThanOrEqual(endedAt - secondAt + 20);

    const file = await gw.download(params.RecordUrl!);
    expect(file.status).toBe(200);
    expect(file.contentType).toBe('audio/mpeg');
    const mp3 = join(dataDir, 'taped.mp3');
    await writeFile(mp3, file.body);
    await run('ffmpeg', ['-v', 'error', '-y', '-i', mp3, '-ar', '8000', `${mp3}.wav`]);
    const { rate, channels, pcm } = wavSamples(await readFile(`${mp3}.wav`));
    expect([rate, channels]).toEqual([8000, 1]);
    for (const [i, power] of tonesIn(pcm, rate, 1000).entries()) {
      expect(power, `${TONES[i]} Hz in the recording`).toBeGreaterThan(LOUD);
    }
    const record = await gw.request(
      'GET',
      `/v1/Account/${gw.main.id}/Recording/${params.RecordingID}/`,
    );
    expect(record.body).toMatchObject({
      recording_type: 'conference',
      conference_name: 'taped',
      recording_format: 'mp3',
      call_uuid: params.ConferenceUUID,
    });
  }, 40_000);

  it('records from the Conference API until stopped: 202 with its URL, the WAV holds every member', async () => {
    app.serve('/answer', { body: '<Response><Conference>on-air</Conference></Response>' });
    const base = `/v1/Account/${gw.main.id}/Conference`;
    const refused = await gw.request('POST', `${base}/on-air/Record/`, { json: {} });
    expect(refused.status).toBe(404);
    expect(refused.body.error).toBe('conference on-air not found');
    await enter(0);
    await enter(1);
    await sleep(300);
    const badFormat = await gw.request('POST', `${base}/on-air/Record/`, {
      json: { file_format: 'ogg' },
    });
    expect(badFormat.status).toBe(400);
    expect(badFormat.body.error).toBe(
      'invalid file_format: ogg is not a supported format; must be mp3 or wav',
    );
    const started = await gw.request('POST', `${base}/on-air/Record/`, {
      json: { file_format: 'wav', callback_url: `${app.baseUrl}/recorded` },
    });
    expect(started.status).toBe(202);
    const id = started.body.recording_id as string;
    expect(started.body).toEqual({
      api_id: expect.any(String),
      message: 'conference recording started',
      recording_id: expect.stringMatching(UUID),
      url: `/v1/Account/${gw.main.id}/Recording/${id}.wav`,
    });
    await sleep(1500);
    const stopped = await gw.request('DELETE', `${base}/on-air/Record/`);
    expect(stopped.status).toBe(204);
    const params = await callback('/recorded');
    expect(params).toEqual({
      api_id: started.body.api_id,
      record_url: started.body.url,
      recording_id: id,
      recording_duration: expect.stringMatching(/^\d+$/),
      recording_duration_ms: expect.stringMatching(/^\d+\.00000$/),
      recording_start_ms: expect.stringMatching(/^\d{13}\.00000$/),
      recording_end_ms: expect.stringMatching(/^\d{13}\.00000$/),
      recording_status: 'completed',
      conference_name: 'on-air',
      conference_uuid: expect.stringMatching(UUID),
    });
    const file = await gw.download(started.body.url);
    expect(file.contentType).toBe('audio/wav');
    const { rate, channels, pcm } = wavSamples(file.body);
    expect([rate, channels]).toEqual([8000, 1]);
    // The duration is the frames written, and the file holds exactly that.
    expect(pcm.length / 8).toBe(Number(params.recording_duration_ms));
    const heard = tonesIn(pcm, rate, 200);
    expect(heard[0]).toBeGreaterThan(LOUD);
    expect(heard[1]).toBeGreaterThan(LOUD);
    expect(heard[2]).toBeLessThan(1e4);
    // The room goes on after its recording stopped.
    expect((await gw.request('GET', `${base}/on-air/`)).body.conference_member_count).toBe('2');
  }, 40_000);
});
