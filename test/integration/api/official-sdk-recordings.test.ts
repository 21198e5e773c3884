import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as plivo from 'plivo';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { muLawEncode } from '../../../src/media/codec/g711.js';
import { answeredCallUuid, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp, paramsOf, type ReceivedCallback } from '../../support/client-app.js';
import { startGateway, UUID, type TestGateway } from '../../support/gateway.js';
import { officialSdk } from '../../support/official-sdk.js';
import { wavSamples } from '../../support/phone-audio.js';
import type { RtpPeer } from '../../support/rtp-peer.js';
import type { SippUas } from '../../support/sipp.js';
import { chunks, strongestFrequency, tone } from '../../support/signal.js';
import { until } from '../../support/wait.js';

/**
 * An application written for the public service, unchanged, drives recordings through the
 * official Node SDK (npm `plivo`) against a real call, and checks each recording callback with
 * the SDK's own validateV3Signature, as it would the public service's.
 */
let gw: TestGateway;
let app: ClientApp;
let dataDir: string;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];
// The SDK's typings leave most answers `any`; the assertions below say what they hold.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let sdk: any;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'voxgate-rec-sdk-'));
  app = await ClientApp.start();
  gw = await startGateway({
    listen: true,
    env: { VOXGATE_DATA_DIR: dataDir, VOXGATE_RECORDING_RATE: '0.00250' },
  });
  sdk = officialSdk(gw);
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

/** A call the carrier answered running `xml`, its phone playing 440 Hz for `seconds`. */
async function toneCall(xml: string, seconds: number) {
  const placed = await placeCarrierCall({ gw, app, carriers, peers }, xml);
  const uuid = await answeredCallUuid(app, placed.requestUuid);
  await until(() => placed.media.received.length > 0);
  const frames = [...chunks(tone(8000, 440, seconds, 8000), [160])].map(muLawEncode);
  const talking = placed.media.stream(placed.media.received[0]!.from.port, frames, {
    payloadType: 0,
  });
  return { uuid, talking };
}

/** What the SDK's validator says of a callback, with the account's token and another. */
function sdkVerdict(request: ReceivedCallback): { valid: boolean; forged: boolean } {
  const params = paramsOf(request);
  const header = (name: string) => String(request.headers[name]);
  const check = (token: string) =>
    Boolean(
      plivo.validateV3Signature(
        request.method,
        request.url,
        header('x-plivo-signature-v3-nonce'),
        token,
        header('x-plivo-signature-v3'),
        params,
      ),
    );
  return { valid: check(gw.main.token), forged: check(`${gw.main.token}x`) };
}

/**
 * The one callback to `path`: a second one fails here, saying so, rather than timing out. None
 * in time fails with what the gateway logged of recordings and callbacks.
 */
async function callbackTo(path: string): Promise<ReceivedCallback> {
  await until(() => app.requestsTo(path).length > 0, 20_000).catch(() => {
    const told = gw.logs.filter((line) => /recording|callback/i.test(line));
    throw new Error(`no callback to ${path} in 20 s; the gateway logged:\n${told.join('\n')}`);
  });
  expect(app.requestsTo(path).map((r) => r.params)).toHaveLength(1);
  return app.requestsTo(path)[0]!;
}

describe('recordings through the official Node SDK', () => {
  it('records a live call, stops it, gets, lists and deletes the recording', async () => {
    const call = await toneCall('<Response><Wait length="20"/></Response>', 4);
    const started = await sdk.calls.record(call.uuid, {
      fileFormat: 'wav',
      callbackUrl: `${app.baseUrl}/recorded`,
      callbackMethod: 'POST',
    });
    expect(started).toMatchObject({
      message: 'call recording started',
      recordingId: expect.stringMatching(UUID),
      url: `/v1/Account/${gw.main.id}/Recording/${started.recordingId}.wav`,
    });
    // A second recording, which stopping the first by its URL leaves running to its limit.
    const other = await sdk.calls.record(call.uuid, {
      timeLimit: 3,
      fileFormat: 'wav',
      callbackUrl: `${app.baseUrl}/recorded-other`,
    });
    await new Promise((r) => setTimeout(r, 1500));
    await sdk.calls.stopRecording(call.uuid, { URL: started.url });

    const callback = await callbackTo('/recorded');
    expect(sdkVerdict(callback)).toEqual({ valid: true, forged: false });
    const params = paramsOf(callback);
    expect(params).toMatchObject({
      recording_id: started.recordingId,
      call_uuid: call.uuid,
      record_url: started.url,
      recording_status: 'completed',
    });
    const ms = Number(params.recording_duration_ms);
    expect(ms).toBeGreaterThan(1000);
    expect(ms).toBeLessThan(2900);
    const otherParams = paramsOf(await callbackTo('/recorded-other'));
    expect(otherParams).toMatchObject({
      recording_id: other.recordingId,
      recording_duration_ms: '3000.00000',
    });

    const got = await sdk.recordings.get(started.recordingId);
    expect(got).toMatchObject({
      recordingId: started.recordingId,
      callUuid: call.uuid,
      recordingFormat: 'wav',
      recordingType: 'call',
      recordingUrl: started.url,
      recordingDurationMs: params.recording_duration_ms,
      recordingStartMs: params.recording_start_ms,
      recordingEndMs: params.recording_end_ms,
      roundedRecordingDuration: 60,
    });
    const file = await gw.download(got.recordingUrl);
    const { pcm } = wavSamples(file.body);
    expect(pcm.length).toBe(ms * 8);
    expect(strongestFrequency(pcm.subarray(2000, 6000), 8000, 10)).toBe(440);

    const listed = await sdk.recordings.list({ callUuid: call.uuid });
    expect(listed.map((r: { recordingId: string }) => r.recordingId).sort()).toEqual(
      [started.recordingId, other.recordingId].sort(),
    );
    expect(listed.meta.totalCount).toBe(2);

    expect(await sdk.recordings.delete(started.recordingId)).toBe(true);
    await expect(sdk.recordings.get(started.recordingId)).rejects.toThrow(/not found/);
    const left = await sdk.recordings.list({ callUuid: call.uuid });
    expect(left.map((r: { recordingId: string }) => r.recordingId)).toEqual([other.recordingId]);
    await call.talking;
  });

  it("signs the Record element's callbackUrl and action so that the SDK's validator passes them", async () => {
    app.serve('/after', { body: '<Response><Wait length="3"/></Response>' });
    const call = await toneCall(
      `<Response><Record action="${app.baseUrl}/after" fileFormat="wav" maxLength="1" playBeep="false" callbackUrl="${app.baseUrl}/recorded-xml"/></Response>`,
      3,
    );
    const callback = await callbackTo('/recorded-xml');
    expect(sdkVerdict(callback)).toEqual({ valid: true, forged: false });
    expect(paramsOf(callback)).toMatchObject({
      CallUUID: call.uuid,
      RecordingDurationMs: '1000.00000',
      RecordingStatus: 'completed',
    });
    const action = await callbackTo('/after');
    expect(sdkVerdict(action)).toEqual({ valid: true, forged: false });
    expect(paramsOf(action).RecordingID).toBe(paramsOf(callback).RecordingID);
    await call.talking;
  });
});
