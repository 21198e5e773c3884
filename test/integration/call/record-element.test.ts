import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { muLawDecode, muLawEncode } from '../../../src/media/codec/g711.js';
import { answeredCallUuid, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp, expectValidSignatures, paramsOf } from '../../support/client-app.js';
import { wavSamples } from '../../support/phone-audio.js';
import { startGateway, UUID, type TestGateway } from '../../support/gateway.js';
import type { RtpPeer } from '../../support/rtp-peer.js';
import type { SippUas } from '../../support/sipp.js';
import { chunks, powerAt, strongestFrequency, tone } from '../../support/signal.js';
import { sleep, until } from '../../support/wait.js';

/**
 * The Record element on real calls (the gateway dials SIPp; the phone is an RTP socket of the
 * test playing a tone and pressing keys): the beep, the recording ended by a key, the action
 * request, and recordSession recording in the background while the document goes on.
 */
let gw: TestGateway;
let app: ClientApp;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({ listen: true });
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
});

async function call(xml: string) {
  const placed = await placeCarrierCall({ gw, app, carriers, peers }, xml);
  const uuid = await answeredCallUuid(app, placed.requestUuid);
  await until(() => placed.media.received.length > 0);
  return { uuid, media: placed.media, port: placed.media.received[0]!.from.port };
}

const frames = (hz: number, seconds: number) =>
  [...chunks(tone(8000, hz, seconds, 8000), [160])].map(muLawEncode);

describe('the Record element', () => {
  it('beeps, records the caller until a finish key, and posts the action', async () => {
    app.serve('/after', { body: '<Response><Wait length="5"/></Response>' });
    const phone = await call(
      `<Response><Record action="${app.baseUrl}/after" fileFormat="wav" maxLength="10" finishOnKey="#" callbackUrl="${app.baseUrl}/recorded"/></Response>`,
    );
    // The beep: 1 kHz from the gateway before the recording.
    await until(() => {
      const heard = muLawDecode(Buffer.concat(phone.media.received.map((p) => p.payload)));
      return heard.length > 1600 && powerAt(heard.subarray(-1600), 8000, 1000) > 1e6;
    });
    await sleep(300);
    await phone.media.stream(phone.port, frames(440, 1.2), { payloadType: 0 });
    await phone.media.pressKey(phone.port, 11);

    await until(() => app.requestsTo('/after').length === 1, 15_000);
    const action = app.requestsTo('/after')[0]!;
    expectValidSignatures(action, { accountToken: gw.main.token, mainToken: gw.main.token });
    const params = action.params;
    expect(params.CallUUID).toBe(phone.uuid);
    expect(params.Digits).toBe('#');
    expect(params.RecordingID).toMatch(UUID);
    expect(params.RecordUrl).toBe(`/v1/Account/${gw.main.id}/Recording/${params.RecordingID}.wav`);
    const ms = Number(params.RecordingDurationMs);
    expect(ms).toBeGreaterThan(1200);
    expect(ms).toBeLessThan(2500);
    expect(Number(params.RecordingEndMs) - Number(params.RecordingStartMs)).toBe(ms);
    expect(params.RecordingDuration).toBe(String(Math.round(ms / 1000)));

    const file = await gw.download(params.RecordUrl!);
    const { pcm } = wavSamples(file.body);
    expect(pcm.length).toBe(ms * 8);
    const at = pcm.findIndex((s) => Math.abs(s) > 2000);
    expect(strongestFrequency(pcm.subarray(at + 400, at + 4400), 8000, 10)).toBe(440);

    await until(() => app.requestsTo('/recorded').length === 1);
    const callback = paramsOf(app.requestsTo('/recorded')[0]!);
    expect(callback).toMatchObject({
      RecordUrl: params.RecordUrl,
      RecordingID: params.RecordingID,
      RecordingDurationMs: params.RecordingDurationMs,
      RecordingStatus: 'completed',
      CallUUID: phone.uuid,
    });
  });

  it('records the whole call in the background with recordSession, the document going on', async () => {
    const phone = await call(
      `<Response><Record recordSession="true" fileFormat="wav" callbackUrl="${app.baseUrl}/recorded"/><Speak>Hello there, this is a test</Speak><Wait length="2"/></Response>`,
    );
    await phone.media.stream(phone.port, frames(440, 1), { payloadType: 0 });
    // The call ends by the document's end: the recording ends with it, stored whole.
    await until(() => app.requestsTo('/recorded').length === 1, 20_000);
    const callback = paramsOf(app.requestsTo('/recorded')[0]!);
    expect(callback.RecordingStatus).toBe('completed');
    const file = await gw.download(callback.RecordUrl!);
    expect(file.body.readUInt16LE(22)).toBe(2);
    const { pcm: left } = wavSamples(file.body);
    // The caller's tone on the left; the speech played to them (not silence) on the right.
    const at = left.findIndex((s) => Math.abs(s) > 2000);
    expect(strongestFrequency(left.subarray(at + 400, at + 4400), 8000, 10)).toBe(440);
    const right = new Int16Array(left.length);
    for (let i = 0; i < right.length; i++) right[i] = file.body.readInt16LE(44 + i * 4 + 2);
    expect(right.some((s) => Math.abs(s) > 1000)).toBe(true);
  });
});
