import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { muLawDecode, muLawEncode } from '../../../src/media/codec/g711.js';
import { answeredCallUuid, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp, expectValidSignatures, paramsOf } from '../../support/client-app.js';
import { wavSamples } from '../../support/phone-audio.js';
import { startGateway, UUID, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
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

/** The right channel (what the caller heard) of a 16-bit stereo WAV. */
function rightChannel(wav: Buffer): Int16Array {
  const right = new Int16Array((wav.length - 44) / 4);
  for (let i = 0; i < right.length; i++) right[i] = wav.readInt16LE(44 + i * 4 + 2);
  return right;
}

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

  it('starts a startOnDialAnswer recording when the Dial is answered, the ringing left out', async () => {
    // B rings a second before it answers; once answered its phone plays 600 Hz.
    const bOpened = Date.now();
    const bMedia = await RtpPeer.open();
    peers.push(bMedia);
    const b = await startSippUas({
      scenario: 'carrier-answer-late.xml',
      variables: { rtp_port: String(bMedia.port), ring_ms: '1000' },
    });
    carriers.push(b);
    const phone = await call(
      `<Response><Record startOnDialAnswer="true" fileFormat="wav" callbackUrl="${app.baseUrl}/recorded"/><Dial timeLimit="2"><User>sip:bob@127.0.0.1:${b.port}</User></Dial></Response>`,
    );
    const aAnswered = app.requestsTo('/answer')[0]!.receivedAt;
    // The caller says 440 Hz all along, through the ringing too.
    const talking = phone.media.stream(phone.port, frames(440, 4.5), { payloadType: 0 });
    await until(() => bMedia.received.length > 0, 8000);
    const bConnected = bOpened + bMedia.received[0]!.at;
    await bMedia.stream(bMedia.received[0]!.from.port, frames(600, 1.8), { payloadType: 0 });

    // The Dial's timeLimit hangs B up, the document ends, and the call with it.
    await until(() => app.requestsTo('/recorded').length === 1, 20_000);
    const callback = paramsOf(app.requestsTo('/recorded')[0]!);
    expect(callback.RecordingStatus).toBe('completed');
    const startMs = Number(callback.RecordingStartMs);
    const ms = Number(callback.RecordingDurationMs);
    // It started at B's answer, a ringing second after the caller's; it spans the bridge
    // (2 s of timeLimit), not the ringing before it.
    expect(startMs - aAnswered).toBeGreaterThan(900);
    expect(Math.abs(startMs - bConnected)).toBeLessThan(400);
    expect(ms).toBeGreaterThan(1800);
    expect(ms).toBeLessThan(2900);

    const file = await gw.download(callback.RecordUrl!);
    expect(file.body.readUInt16LE(22)).toBe(2);
    const { pcm: left } = wavSamples(file.body);
    expect(left.length).toBe(ms * 8);
    const right = rightChannel(file.body);
    // From its first half second the file holds B on the right (no ringback before it) and
    // the caller on the left.
    const heardAt = right.findIndex((s) => Math.abs(s) > 2000);
    expect(heardAt).toBeGreaterThanOrEqual(0);
    expect(heardAt).toBeLessThan(4000);
    expect(strongestFrequency(right.subarray(heardAt + 400, heardAt + 4400), 8000, 10)).toBe(600);
    expect(strongestFrequency(left.subarray(800, 4800), 8000, 10)).toBe(440);
    await talking;
  });
});
