import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { wavHeader } from '../../../src/media/recording/wav-file-writer.js';
import { ClientApp } from '../../support/client-app.js';
import type { TestGateway } from '../../support/gateway.js';
import { officialSdk } from '../../support/official-sdk.js';
import { powerAt, tone } from '../../support/signal.js';
import type { SipPeer } from '../../support/sip-peer.js';
import { ConferenceGateway } from '../../support/conference-gateway.js';
import { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * The official Node SDK's conference calls (npm `plivo`, the pinned version) against a real
 * gateway over HTTP, with tone phones of the project's own in the rooms: what the SDK hands
 * back, and what the members hear and receive after each call.
 */
const NUMBER = '14155550144';
const TONES = [500, 800, 1300];
/** What the played file holds. */
const FILE_HZ = 2000;
const LOUD = 1e6;
const QUIET = 1e4;
let gw: TestGateway;
let app: ClientApp;
let sip: SipPeer;
let room: ConferenceGateway;
let files: Server;
let fileUrl: string;
// The SDK's typings leave most answers `any`; the assertions below say what they hold.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let sdk: any;
const phones: TonePhone[] = [];

beforeAll(async () => {
  room = await ConferenceGateway.start({ number: NUMBER, appName: 'sdk-rooms' });
  ({ gw, app, sip } = room);
  sdk = officialSdk(gw);
  const pcm = tone(8000, FILE_HZ, 3, 8000);
  const wav = Buffer.concat([wavHeader(8000, 1, pcm.byteLength), Buffer.from(pcm.buffer)]);
  files = createServer((_, res) => res.writeHead(200, { 'Content-Type': 'audio/wav' }).end(wav));
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  fileUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/tone.wav`;
  app.serve('/answer', (request) => ({
    body: `<Response><Conference>${new URLSearchParams(request.body).get('From')?.startsWith('b') ? 'sdk-b' : 'sdk-a'}</Conference></Response>`,
  }));
});

afterEach(async () => {
  for (const phone of phones.splice(0)) {
    await phone.hangup();
    await phone.close();
  }
});

afterAll(async () => {
  await room?.close();
  await new Promise((resolve) => files?.close(resolve));
});

async function enter(index: number, from: string): Promise<TonePhone> {
  const phone = await TonePhone.call(
    sip,
    { user: NUMBER, port: gw.gateway.sip.addresses.udp.port, from },
    TONES[index]!,
  );
  phones.push(phone);
  return phone;
}

/** Power at each of `hz` in what `phone` hears over the next second. */
async function hears(phone: TonePhone, hz: number[] = TONES): Promise<number[]> {
  const from = phone.now;
  await sleep(1000);
  return hz.map((f) => powerAt(phone.heard(from), 8000, f));
}

/** Mean square of what `phone` hears over the next second. */
async function loudness(phone: TonePhone): Promise<number> {
  const from = phone.now;
  await sleep(1000);
  const heard = phone.heard(from);
  return heard.reduce((sum, s) => sum + s * s, 0) / heard.length;
}

describe('the official SDK on conferences', () => {
  it('lists, gets, mutes, deafens, plays, speaks, kicks and hangs up members and rooms', async () => {
    const a = [await enter(0, 'a0'), await enter(1, 'a1'), await enter(2, 'a2')];
    const b = await enter(0, 'b0');
    await until(async () => (await sdk.conferences.list()).conferences.length === 2, 5000);
    expect((await sdk.conferences.list()).conferences.sort()).toEqual(['sdk-a', 'sdk-b']);
    const room = await sdk.conferences.get('sdk-a');
    expect(room).toMatchObject({ conferenceName: 'sdk-a', conferenceMemberCount: '3' });
    const ids = (room.members as { memberId: string; from: string }[])
      .sort((x, y) => x.from.localeCompare(y.from))
      .map((m) => m.memberId);

    const muted = await sdk.conferences.muteMember('sdk-a', ids[0]);
    expect(muted).toMatchObject({ message: 'muted', memberId: ids[0] });
    const deaf = await sdk.conferences.deafMember('sdk-a', ids[2]);
    expect(deaf).toMatchObject({ message: 'deaf', memberId: ids[2] });
    await sleep(200);
    const [one, two] = await Promise.all([hears(a[1]!), loudness(a[2]!)]);
    expect(one[0], 'a muted member is not heard').toBeLessThan(QUIET);
    expect(one[2]).toBeGreaterThan(LOUD);
    expect(two, 'a deaf member hears nothing').toBeLessThan(QUIET);
    await sdk.conferences.unmuteMember('sdk-a', ids[0]);
    await sleep(200);
    expect((await hears(a[1]!))[0], 'unmuted').toBeGreaterThan(LOUD);

    // Play and Speak go to the member alone, deaf or not.
    const played = await sdk.conferences.playAudioToMember('sdk-a', ids[2], fileUrl);
    expect(played).toMatchObject({ message: 'play queued into conference', memberId: ids[2] });
    await sleep(300);
    const [toDeaf, toOther] = await Promise.all([hears(a[2]!, [FILE_HZ]), hears(a[1]!, [FILE_HZ])]);
    expect(toDeaf[0]).toBeGreaterThan(LOUD);
    expect(toOther[0]).toBeLessThan(QUIET);
    await sdk.conferences.stopPlayingAudioToMember('sdk-a', ids[2]);
    await sleep(200);
    expect((await hears(a[2]!, [FILE_HZ]))[0], 'play stopped').toBeLessThan(QUIET);
    const spoken = await sdk.conferences.speakTextToMember('sdk-a', ids[2], 'Hello there member');
    expect(spoken).toMatchObject({ message: 'speak queued into conference', memberId: ids[2] });
    await sleep(300);
    expect(await loudness(a[2]!), 'the deaf member hears the speech').toBeGreaterThan(QUIET);
    await sdk.conferences.stopSpeakingTextToMember('sdk-a', ids[2]);
    await sdk.conferences.undeafMember('sdk-a', ids[2]);
    await sleep(200);
    expect((await hears(a[2]!))[0], 'undeafened').toBeGreaterThan(LOUD);

    // Kicked, then hung up: each gets its BYE (the document has nothing after Conference).
    await sdk.conferences.kickMember('sdk-a', ids[1]);
    await until(() => a[1]!.byeReceived, 5000);
    await sdk.conferences.hangupMember('sdk-a', ids[0]);
    await until(() => a[0]!.byeReceived, 5000);
    expect(a[2]!.byeReceived).toBe(false);
    await sdk.conferences.hangup('sdk-a');
    await until(() => a[2]!.byeReceived, 5000);
    expect(b.byeReceived).toBe(false);
    await sdk.conferences.hangupAll();
    await until(() => b.byeReceived, 5000);
    expect((await sdk.conferences.list()).conferences).toEqual([]);
    await expect(sdk.conferences.get('sdk-a')).rejects.toThrow(/conference sdk-a not found/);
  }, 60_000);

  it('records a room and stops it', async () => {
    await enter(0, 'a0');
    await enter(1, 'a1');
    await until(async () => (await sdk.conferences.list()).conferences.length === 1, 5000);
    const started = await sdk.conferences.record('sdk-a', { fileFormat: 'wav' });
    expect(started).toMatchObject({
      message: 'conference recording started',
      recordingId: expect.any(String),
      url: `/v1/Account/${gw.main.id}/Recording/${started.recordingId}.wav`,
    });
    await sleep(1000);
    await sdk.conferences.stopRecording('sdk-a');
    await until(
      async () =>
        (await gw.request('GET', `/v1/Account/${gw.main.id}/Recording/${started.recordingId}/`))
          .status === 200,
      10_000,
    );
    const recording = await sdk.recordings.get(started.recordingId);
    expect(recording).toMatchObject({ recordingType: 'conference', conferenceName: 'sdk-a' });
  }, 30_000);
});
