import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { muLawEncode } from '../../../src/media/codec/g711.js';
import { answeredCallUuid, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp, expectValidSignatures, paramsOf } from '../../support/client-app.js';
import { wavSamples } from '../../support/phone-audio.js';
import { startGateway, UUID, type Credentials, type TestGateway } from '../../support/gateway.js';
import type { RtpPeer } from '../../support/rtp-peer.js';
import type { SippUas } from '../../support/sipp.js';
import { chunks, strongestFrequency, tone } from '../../support/signal.js';
import { until } from '../../support/wait.js';

/**
 * Recording calls through the REST API on real calls (the gateway dials SIPp, whose audio is an
 * RTP socket of the test playing a tone): the file decoded, the Recording resource, the signed
 * callback, the errors, and a store that fails mid-recording.
 */
let gw: TestGateway;
let app: ClientApp;
let sub: Credentials;
let dataDir: string;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];
const run = promisify(execFile);

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'voxgate-rec-api-'));
  app = await ClientApp.start();
  gw = await startGateway({
    listen: true,
    env: { VOXGATE_DATA_DIR: dataDir, VOXGATE_RECORDING_RATE: '0.00250' },
  });
  sub = await gw.subaccount('other');
});

afterEach(async () => {
  await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/`);
  await Promise.all(carriers.splice(0).map((c) => c.stop()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
  app.reset();
});

afterAll(async () => {
  await gw.close();
  await app.close();
  await rm(dataDir, { recursive: true, force: true });
});

const v1 = (as: Credentials = gw.main) => `/v1/Account/${as.id}`;

/** A call the carrier answered, its phone playing `hz` for `seconds` into the gateway. */
async function toneCall(hz: number, seconds: number) {
  const placed = await placeCarrierCall(
    { gw, app, carriers, peers },
    '<Response><Wait length="20"/></Response>',
  );
  const uuid = await answeredCallUuid(app, placed.requestUuid);
  await until(() => placed.media.received.length > 0);
  const gatewayPort = placed.media.received[0]!.from.port;
  const frames = [...chunks(tone(8000, hz, seconds, 8000), [160])].map(muLawEncode);
  const talking = placed.media.stream(gatewayPort, frames, { payloadType: 0 });
  return { uuid, talking, media: placed.media };
}

async function callbackOf(recordingId: string) {
  const find = () => app.requestsTo('/recorded').find((r) => r.params.recording_id === recordingId);
  await until(() => find() !== undefined, 20_000);
  return find()!;
}

describe('recording calls from the API', () => {
  it('records a call to WAV, serves it to its account alone, lists, gets and deletes it', async () => {
    const call = await toneCall(440, 3);
    const started = await gw.request('POST', `${v1()}/Call/${call.uuid}/Record/`, {
      json: {
        time_limit: 2,
        file_format: 'wav',
        callback_url: `${app.baseUrl}/recorded`,
      },
    });
    expect(started.status).toBe(202);
    const { recording_id: id, url } = started.body as { recording_id: string; url: string };
    expect(started.body).toEqual({
      api_id: expect.any(String),
      message: 'call recording started',
      recording_id: expect.stringMatching(UUID),
      url: `/v1/Account/${gw.main.id}/Recording/${id}.wav`,
    });

    const callback = await callbackOf(id);
    expectValidSignatures(callback, { accountToken: gw.main.token, mainToken: gw.main.token });
    const params = paramsOf(callback);
    expect(params).toEqual({
      api_id: started.body.api_id,
      record_url: url,
      call_uuid: call.uuid,
      recording_id: id,
      recording_duration: '2',
      recording_duration_ms: '2000.00000',
      recording_start_ms: expect.stringMatching(/^\d{13}\.00000$/),
      recording_end_ms: expect.stringMatching(/^\d{13}\.00000$/),
      recording_status: 'completed',
    });
    expect(Number(params.recording_end_ms) - Number(params.recording_start_ms)).toBe(2000);

    // The file: 2 s of 8 kHz mono, the phone's tone in it.
    const file = await gw.download(url);
    expect(file.status).toBe(200);
    expect(file.contentType).toBe('audio/wav');
    const { rate, channels, pcm } = wavSamples(file.body);
    expect([rate, channels, pcm.length]).toEqual([8000, 1, 16000]);
    expect(strongestFrequency(pcm.subarray(4000, 12000), 8000, 10)).toBe(440);

    const got = await gw.request('GET', `${v1()}/Recording/${id}/`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      api_id: expect.any(String),
      add_time: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+00:00$/),
      call_uuid: call.uuid,
      conference_name: null,
      from_number: '+14155550100',
      to_number: expect.stringContaining('sip:alice@127.0.0.1'),
      recording_duration_ms: '2000.00000',
      recording_start_ms: params.recording_start_ms,
      recording_end_ms: params.recording_end_ms,
      recording_format: 'wav',
      recording_id: id,
      recording_type: 'call',
      recording_url: url,
      resource_uri: `/v1/Account/${gw.main.id}/Recording/${id}/`,
      // Billed per started minute at VOXGATE_RECORDING_RATE.
      rounded_recording_duration: 60,
      recording_rate: '0.00250',
      recording_amount: '0.00250',
    });
    const list = async (query: string) =>
      (await gw.request('GET', `${v1()}/Recording/?${query}`)).body as {
        meta: { total_count: number };
        objects: { recording_id: string }[];
      };
    expect((await list(`call_uuid=${call.uuid}`)).objects.map((r) => r.recording_id)).toEqual([id]);
    expect((await list('call_uuid=someone-else')).meta.total_count).toBe(0);
    expect((await list('add_time__gte=2000-01-01 00:00')).meta.total_count).toBe(1);
    expect((await list('add_time__lt=2000-01-01 00:00')).meta.total_count).toBe(0);
    expect((await gw.request('GET', `${v1()}/Recording/?add_time__gt=yesterday`)).status).toBe(400);

    // Another account sees nothing of it, under its own account or the owner's.
    expect((await gw.request('GET', `${v1(sub)}/Recording/${id}/`, { as: sub })).status).toBe(404);
    expect((await gw.request('GET', `${v1(sub)}/Recording/${id}.wav`, { as: sub })).status).toBe(
      404,
    );
    expect((await gw.request('GET', `${v1()}/Recording/${id}.wav`, { as: sub })).status).toBe(401);
    expect((await gw.request('DELETE', `${v1(sub)}/Recording/${id}/`, { as: sub })).status).toBe(
      404,
    );

    expect((await gw.request('DELETE', `${v1()}/Recording/${id}/`)).status).toBe(204);
    expect((await gw.request('GET', `${v1()}/Recording/${id}/`)).status).toBe(404);
    expect((await gw.download(url)).status).toBe(404);
    expect(existsSync(join(dataDir, 'media', id))).toBe(false);
    await call.talking;
  });

  it('records stereo to mp3 until stopped by its URL, the tone on the caller channel', async () => {
    const call = await toneCall(700, 3);
    const started = await gw.request('POST', `${v1()}/Call/${call.uuid}/Record/`, {
      json: {
        file_format: 'mp3',
        record_channel_type: 'stereo',
        callback_url: `${app.baseUrl}/recorded`,
      },
    });
    expect(started.status).toBe(202);
    const { recording_id: id, url } = started.body as { recording_id: string; url: string };
    expect(url).toBe(`/v1/Account/${gw.main.id}/Recording/${id}.mp3`);
    await new Promise((r) => setTimeout(r, 1500));
    const wrong = await gw.request('DELETE', `${v1()}/Call/${call.uuid}/Record/`, {
      json: { URL: `${url}x` },
    });
    expect(wrong.status).toBe(404);
    const stop = await gw.request('DELETE', `${v1()}/Call/${call.uuid}/Record/`, {
      json: { URL: url },
    });
    expect(stop.status).toBe(204);
    const params = paramsOf(await callbackOf(id));
    expect(params.recording_status).toBe('completed');

    const file = await gw.download(url);
    expect(file.contentType).toBe('audio/mpeg');
    // Decoded by ffmpeg: two channels, the phone (the call's party) on the left alone.
    const mp3 = join(dataDir, `${id}.mp3`);
    await writeFile(mp3, file.body);
    await run('ffmpeg', ['-v', 'error', '-y', '-i', mp3, `${mp3}.wav`]);
    const decoded = await readFile(`${mp3}.wav`);
    expect(decoded.readUInt16LE(22)).toBe(2);
    const left = wavSamples(decoded).pcm;
    const at = left.findIndex((s) => Math.abs(s) > 2000);
    expect(strongestFrequency(left.subarray(at + 800, at + 4800), 8000, 10)).toBe(700);
    const ms = Number(params.recording_duration_ms);
    expect(ms % 20).toBe(0);
    expect(Math.abs(left.length / 8 - ms)).toBeLessThan(80);
    await call.talking;
  });

  it("sums the call's recordings on its record, one cut short by the hangup included", async () => {
    const call = await toneCall(440, 4);
    const record = (json: object) =>
      gw.request('POST', `${v1()}/Call/${call.uuid}/Record/`, {
        json: { file_format: 'wav', callback_url: `${app.baseUrl}/recorded`, ...json },
      });
    const first = await record({ time_limit: 1 });
    const firstParams = paramsOf(await callbackOf(first.body.recording_id));
    expect(firstParams.recording_duration_ms).toBe('1000.00000');
    const second = await record({});
    await new Promise((r) => setTimeout(r, 700));
    expect((await gw.request('DELETE', `${v1()}/Call/${call.uuid}/`)).status).toBe(204);
    const secondParams = paramsOf(await callbackOf(second.body.recording_id));
    expect(secondParams.recording_status).toBe('completed');
    const secondMs = Number(secondParams.recording_duration_ms);
    expect(secondMs).toBeGreaterThan(0);

    const ended = async () => (await gw.request('GET', `${v1()}/Call/${call.uuid}/`)).body;
    await until(async () => (await ended())?.end_time !== undefined);
    // Two recordings, each a started minute at 0.00250.
    expect(await ended()).toEqual(
      expect.objectContaining({
        call_uuid: call.uuid,
        recording_duration_ms: 1000 + secondMs,
        recording_amount: '0.00500',
      }),
    );
    const stored = await gw.request('GET', `${v1()}/Recording/${second.body.recording_id}/`);
    expect(stored.body.recording_amount).toBe('0.00250');
    await call.talking;
  });

  it('answers 404 for an unknown call and 400 naming an unsupported format', async () => {
    const unknown = await gw.request('POST', `${v1()}/Call/no-such-call/Record/`, { json: {} });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('call no-such-call not found');
    expect((await gw.request('DELETE', `${v1()}/Call/no-such-call/Record/`)).status).toBe(404);

    const call = await toneCall(440, 1);
    const ogg = await gw.request('POST', `${v1()}/Call/${call.uuid}/Record/`, {
      json: { file_format: 'ogg' },
    });
    expect(ogg.status).toBe(400);
    expect(ogg.body.error).toBe(
      'invalid file_format: ogg is not a supported format; must be mp3 or wav',
    );
    // Another account's call is unknown to it.
    const other = await gw.request('POST', `${v1(sub)}/Call/${call.uuid}/Record/`, {
      as: sub,
      json: {},
    });
    expect(other.status).toBe(404);
    expect(
      (await gw.request('GET', `${v1()}/Recording/?call_uuid=${call.uuid}`)).body.meta,
    ).toEqual(expect.objectContaining({ total_count: 0 }));
    await call.talking;
  });

  it('ends the recording failed and the call goes on when the disk fills up mid-recording', async () => {
    const call = await toneCall(440, 4);
    const started = await gw.request('POST', `${v1()}/Call/${call.uuid}/Record/`, {
      json: { time_limit: 10, file_format: 'wav', callback_url: `${app.baseUrl}/recorded` },
    });
    const id = started.body.recording_id as string;
    await new Promise((r) => setTimeout(r, 600));
    const spool = join(dataDir, 'recordings-spool', `${id}.wav`);
    await rm(spool);
    await symlink('/dev/full', spool);

    const params = paramsOf(await callbackOf(id));
    expect(params.recording_status).toBe('failed');
    expect(params.recording_error).toMatch(/^the recording could not be written: .*ENOSPC/);
    expect(gw.logs.some((l) => l.includes('recording failed') && l.includes(id))).toBe(true);
    // The call is still up, and no half-written recording is left or listed.
    const live = await gw.request('GET', `${v1()}/Call/${call.uuid}/?status=live`);
    expect(live.status).toBe(200);
    expect((await gw.request('GET', `${v1()}/Recording/${id}/`)).status).toBe(404);
    expect(existsSync(join(dataDir, 'media', id))).toBe(false);
    await until(async () => (await readdir(join(dataDir, 'recordings-spool'))).length === 0);
    await call.talking;
  });
});
