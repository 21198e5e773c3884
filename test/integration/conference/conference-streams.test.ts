import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp, paramsOf } from '../../support/client-app.js';
import type { TestGateway } from '../../support/gateway.js';
import { concat, powerAt, tone } from '../../support/signal.js';
import type { SipPeer } from '../../support/sip-peer.js';
import { StreamServer, type StreamConnection } from '../../support/stream-server.js';
import { ConferenceGateway } from '../../support/conference-gateway.js';
import { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * The audio streams of a conference member: tone phones of the project's own meet in a room,
 * one of them forked to a WebSocket bot. What the bot receives on each track, and who hears
 * the audio it plays back, is measured.
 */
const NUMBER = '14155550177';
const TONES = [500, 800, 1300];
/** What the bot plays back: a tone no phone plays. */
const BOT_HZ = 2000;
const LOUD = 1e6;
const QUIET = 1e4;
let gw: TestGateway;
let app: ClientApp;
let sip: SipPeer;
let room: ConferenceGateway;
let bot: StreamServer;
const phones: TonePhone[] = [];

beforeAll(async () => {
  room = await ConferenceGateway.start({ number: NUMBER, appName: 'streamed-room' });
  ({ gw, app, sip } = room);
  bot = await StreamServer.start();
});

afterEach(async () => {
  for (const phone of phones.splice(0)) {
    await phone.hangup();
    await phone.close();
  }
  app.reset();
});

afterAll(async () => {
  await bot?.close();
  await room?.close();
});

async function join(index: number): Promise<TonePhone> {
  const phone = await TonePhone.call(
    sip,
    { user: NUMBER, port: gw.gateway.sip.addresses.udp.port, from: `member${index}` },
    TONES[index]!,
  );
  phones.push(phone);
  return phone;
}

/** Power at each of `hz` in the last `ms` of a track the bot received (L16 at 8 kHz). */
function trackPowers(ws: StreamConnection, track: string, ms: number, hz: number[]): number[] {
  const pcm = concat(
    ws.payloads(track).map((b) => new Int16Array(b.buffer, b.byteOffset, b.length / 2)),
  );
  const tail = pcm.subarray(pcm.length - (8000 * ms) / 1000);
  expect(tail.length).toBe((8000 * ms) / 1000);
  return hz.map((f) => powerAt(tail, 8000, f));
}

async function heardOverASecond(phone: TonePhone, hz: number[]): Promise<number[]> {
  const from = phone.now;
  await sleep(1000);
  const heard = phone.heard(from);
  expect(heard.length).toBeGreaterThan(6000);
  return hz.map((f) => powerAt(heard, 8000, f));
}

describe('a conference member streamed', () => {
  it('sends its voice on inbound and the mix on outbound; its playAudio reaches it alone', async () => {
    app.serve('/answer', (request) => ({
      body:
        '<Response>' +
        (paramsOf(request).From === 'member0'
          ? `<Stream audioTrack="both" contentType="audio/x-l16;rate=8000">${bot.url}</Stream>`
          : '') +
        '<Conference>streamed</Conference></Response>',
    }));
    const members = [await join(0), await join(1), await join(2)];
    const tracks = await bot.connection(0);
    await until(() => tracks.of('start').length === 1, 5000);
    expect(tracks.of('start')[0]).toMatchObject({ start: { tracks: ['inbound', 'outbound'] } });
    await sleep(1500);
    const inbound = trackPowers(tracks, 'inbound', 1000, TONES);
    expect(inbound[0], 'the member is heard on inbound').toBeGreaterThan(LOUD);
    expect(inbound[1]).toBeLessThan(QUIET);
    expect(inbound[2]).toBeLessThan(QUIET);
    const outbound = trackPowers(tracks, 'outbound', 1000, TONES);
    expect(outbound[0], 'the member does not hear itself').toBeLessThan(QUIET);
    expect(outbound[1], 'the mix is on outbound').toBeGreaterThan(LOUD);
    expect(outbound[2]).toBeGreaterThan(LOUD);

    // A second stream from the API, bidirectional: what the bot plays goes to member0 alone.
    const room = await gw.request('GET', `/v1/Account/${gw.main.id}/Conference/streamed/`);
    const member0 = (room.body.members as { from: string; call_uuid: string }[]).find(
      (m) => m.from === 'member0',
    )!;
    const started = await gw.request(
      'POST',
      `/v1/Account/${gw.main.id}/Call/${member0.call_uuid}/Stream/`,
      {
        json: {
          service_url: bot.url,
          bidirectional: true,
          content_type: 'audio/x-l16;rate=8000',
        },
      },
    );
    expect(started.status).toBe(201);
    const talker = await bot.connection(1);
    await until(() => talker.of('start').length === 1, 5000);
    // As bots do: a chunk of 20 ms every 20 ms.
    const playback = tone(8000, BOT_HZ, 3, 8000);
    let sent = 0;
    const talking = setInterval(() => {
      const chunk = playback.slice(sent, sent + 160);
      sent = (sent + 160) % playback.length;
      talker.send({
        event: 'playAudio',
        media: {
          contentType: 'audio/x-l16',
          sampleRate: 8000,
          payload: Buffer.from(chunk.buffer).toString('base64'),
        },
      });
    }, 20);
    await sleep(300);
    const hz = [...TONES, BOT_HZ];
    const heard = await Promise.all(members.map((m) => heardOverASecond(m, hz)));
    expect(heard[0]![3], 'member0 hears the bot').toBeGreaterThan(LOUD);
    expect(heard[1]![3], 'member1 does not').toBeLessThan(QUIET);
    expect(heard[2]![3], 'member2 does not').toBeLessThan(QUIET);
    // member0 still hears the room beside the bot, and the room still hears member0.
    expect(heard[0]![1]).toBeGreaterThan(LOUD);
    expect(heard[1]![0]).toBeGreaterThan(LOUD);
    // The first stream's outbound track is what member0 hears: the bot's audio is on it.
    const withBot = trackPowers(tracks, 'outbound', 500, [BOT_HZ, TONES[1]!]);
    expect(withBot[0]).toBeGreaterThan(LOUD);
    expect(withBot[1]).toBeGreaterThan(LOUD);
    expect(trackPowers(tracks, 'inbound', 500, [BOT_HZ])[0]).toBeLessThan(QUIET);
    clearInterval(talking);
    expect(tracks.violations).toEqual([]);
    expect(talker.violations).toEqual([]);
  }, 30_000);
});
