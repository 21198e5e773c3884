import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { muLawDecode, muLawEncode } from '../../../src/media/codec/g711.js';
import type { IncomingInvite } from '../../../src/sip/ua/incoming-invite.js';
import type { InviteProgress } from '../../../src/sip/ua/outgoing-invite.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer, type ReceivedRtp } from '../../support/rtp-peer.js';
import { powerAt, strongestFrequency, tone } from '../../support/signal.js';
import { openSipPeer, type SipPeer } from '../../support/sip-peer.js';

/**
 * A called party that answers with early media (RFC 3960: a 183 with SDP and audio before the
 * 200, an announcement or its own ringback). Behind an inbound trunk (a PBX): the carrier's
 * caller gets a 183 with the gateway's SDP and hears that audio before the answer, and after
 * it the call's own. Dialled by an application (Dial with dialMusic real, the default): the
 * caller hears the called party's audio instead of the gateway's ringback tone. The PBXs,
 * called parties and callers are SIP user agents of the test with plain PCMU RTP peers.
 */
let gw: TestGateway;
let app: ClientApp;
const APP_NUMBER = '14155550699';
let caller: SipPeer;
let callerMedia: RtpPeer;
const pbxs: { sip: SipPeer; media: RtpPeer; quiet: () => void }[] = [];
let nextNumber = 14155550700;

const pcmu = (port: number) =>
  `v=0\r\no=peer 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n` +
  `m=audio ${port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=sendrecv\r\n`;
const audioPort = (sdp: string | null) => Number(/^m=audio (\d+)/m.exec(sdp ?? '')?.[1]);

beforeAll(async () => {
  gw = await startGateway({
    listen: true,
    env: { VOXGATE_TRUNK_RESPONSE_TIMEOUT: '2', VOXGATE_TRUNK_PROBE_INTERVAL: '0' },
  });
  caller = await openSipPeer();
  callerMedia = await RtpPeer.open(0x0c0ffee0);
  app = await ClientApp.start();
  const application = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
    json: { app_name: 'dialler', answer_url: `${app.baseUrl}/answer` },
  });
  expect(application.status).toBe(201);
  const added = await gw.request('POST', `/v1/Account/${gw.main.id}/Number/`, {
    json: { numbers: APP_NUMBER, carrier: 'c', region: 'r', app_id: application.body.app_id },
  });
  expect(added.status).toBeLessThan(300);
});

afterEach(async () => {
  for (const pbx of pbxs.splice(0)) {
    pbx.quiet();
    await pbx.sip.stack.close();
    await pbx.media.close();
  }
  callerMedia.received.length = 0;
  app.reset();
});

afterAll(async () => {
  await caller?.stack.close();
  await callerMedia?.close();
  await gw?.close();
  await app?.close();
});

const account = () => `/v1/Account/${gw.main.id}`;

/**
 * A PBX (or a called phone) that sends 183 with SDP and `hz` of tone at once, then does `then`
 * after `afterMs`; after its answer it plays `answeredHz` (the same by default).
 */
async function earlyPbx(
  hz: number,
  afterMs: number,
  then: (invite: IncomingInvite, sdp: string) => void,
  answeredHz = hz,
): Promise<number> {
  const sip = await openSipPeer();
  const media = await RtpPeer.open();
  const timers: NodeJS.Timeout[] = [];
  pbxs.push({ sip, media, quiet: () => timers.forEach(clearInterval) });
  sip.uas.onInvite = (invite) => {
    const sdp = pcmu(media.port);
    invite.progress(sdp);
    // Its tone from the 183 on, every 20 ms, until the test is over.
    const early = [...frames20ms(tone(8000, hz, 1, 8000))];
    const answered = [...frames20ms(tone(8000, answeredHz, 1, 8000))];
    let next = 0;
    const to = audioPort(invite.offer);
    timers.push(
      setInterval(() => {
        const frames = invite.state === 'confirmed' ? answered : early;
        media.send(to, frames[next++ % frames.length]!, { payloadType: 0 });
      }, 20),
      setTimeout(() => then(invite, sdp), afterMs),
    );
  };
  return sip.port;
}

/** A phone that rings (180, no early media) and answers after `afterMs`, then plays `hz`. */
async function ringingPhone(hz: number, afterMs: number): Promise<number> {
  const sip = await openSipPeer();
  const media = await RtpPeer.open();
  const timers: NodeJS.Timeout[] = [];
  pbxs.push({ sip, media, quiet: () => timers.forEach(clearInterval) });
  sip.uas.onInvite = (invite) => {
    invite.ring();
    const frames = [...frames20ms(tone(8000, hz, 1, 8000))];
    let next = 0;
    const to = audioPort(invite.offer);
    timers.push(
      setTimeout(() => {
        invite.answer(pcmu(media.port));
        timers.push(
          setInterval(
            () => media.send(to, frames[next++ % frames.length]!, { payloadType: 0 }),
            20,
          ),
        );
      }, afterMs),
    );
  };
  return sip.port;
}

function* frames20ms(pcm: Int16Array): Generator<Uint8Array> {
  for (let i = 0; i + 160 <= pcm.length; i += 160) yield muLawEncode(pcm.subarray(i, i + 160));
}

async function trunkNumber(primaryPort: number, fallbackPort?: number): Promise<string> {
  const uri = async (port: number) => {
    const res = await gw.request('POST', `${account()}/SipTrunk/URI/`, {
      json: { uri: `127.0.0.1:${port}` },
    });
    expect(res.status).toBe(201);
    return res.body.uri_uuid as string;
  };
  const trunk = await gw.request('POST', `${account()}/SipTrunk/Trunk/`, {
    json: {
      name: 'pbx with announcements',
      trunk_direction: 'inbound',
      primary_uri_uuid: await uri(primaryPort),
      ...(fallbackPort !== undefined && { fallback_uri_uuid: await uri(fallbackPort) }),
    },
  });
  expect(trunk.status).toBe(201);
  const number = String(nextNumber++);
  const added = await gw.request('POST', `${account()}/Number/`, {
    json: { numbers: number, carrier: 'c', region: 'r', trunk_id: trunk.body.trunk_id },
  });
  expect(added.status).toBe(201);
  return number;
}

/** The carrier's call to `number`; what came back, and when. */
async function call(number: string) {
  const progress: InviteProgress[] = [];
  const started = Date.now() - callerMedia.opened;
  const invite = caller.uac.invite({
    target: `sip:${number}@127.0.0.1:${gw.gateway.sip.addresses.udp.port}`,
    from: 'sip:+14155550100@carrier.test',
    sdp: pcmu(callerMedia.port),
    delegate: { onProgress: (p) => progress.push(p) },
  });
  const outcome = await invite.outcome;
  return { outcome, progress, started, settled: Date.now() - callerMedia.opened };
}

/** What the caller heard between two moments (ms since its RTP peer opened), decoded. */
function samplesHeard(
  from: number,
  to: number,
  packets: readonly ReceivedRtp[] = callerMedia.received,
): Int16Array {
  const pcm = packets
    .filter((p) => p.at >= from && p.at < to && p.payloadType === 0)
    .map((p) => muLawDecode(p.payload));
  return Int16Array.from(pcm.flatMap((frame) => [...frame]));
}

/** The dominant frequency of what the caller heard between two moments, null for silence. */
function heard(from: number, to: number, packets: readonly ReceivedRtp[] = callerMedia.received) {
  const samples = samplesHeard(from, to, packets);
  const loud = samples.some((s) => Math.abs(s) > 1000);
  return { frames: samples.length / 160, hz: loud ? strongestFrequency(samples, 8000, 25) : null };
}

describe('early media from a PBX behind a trunk', () => {
  it("reaches the caller in a 183 before the answer, and the call goes on after the PBX's 200", async () => {
    const port = await earlyPbx(700, 1200, (invite, sdp) => invite.answer(sdp));
    const number = await trunkNumber(port);
    const { outcome, progress, started, settled } = await call(number);
    expect(outcome.answered).toBe(true);
    if (!outcome.answered) return;
    const session = progress.find((p) => p.status === 183);
    expect(session?.sdp).toMatch(/^m=audio \d+ RTP\/AVP 0/m);
    // RFC 3261 13.2.1: the 200's SDP is the same answer as the 183's.
    expect(audioPort(outcome.sdp)).toBe(audioPort(session!.sdp));
    // Before the answer, the PBX's 700 Hz came through.
    const before = heard(started, settled);
    expect(before.frames).toBeGreaterThan(25);
    expect(before.hz).toBeGreaterThan(675);
    expect(before.hz).toBeLessThan(725);
    // After it, the same PBX goes on being heard: the call's bridge took over.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const after = heard(settled + 100, settled + 600);
    expect(after.hz).toBeGreaterThan(675);
    expect(after.hz).toBeLessThan(725);
    expect((await outcome.dialog.bye())?.status).toBe(200);
  }, 30_000);

  it('lets the caller hear it, then gets the PBX refusal as it came', async () => {
    const port = await earlyPbx(700, 1000, (invite) => invite.reject(486));
    const number = await trunkNumber(port);
    const { outcome, progress, started, settled } = await call(number);
    expect(outcome).toMatchObject({ answered: false, failure: { status: 486 } });
    expect(progress.map((p) => p.status)).toContain(183);
    expect(heard(started, settled).hz).toBeGreaterThan(675);
    // The gateway took the call down: no leg of it is live.
    const live = await gw.request('GET', `${account()}/Call/?status=live`);
    expect(live.body.calls).toEqual([]);
  }, 30_000);

  it("switches the caller to the fallback's audio when the primary's early media ends in a failure", async () => {
    const primary = await earlyPbx(500, 800, (invite) => invite.reject(503));
    const fallback = await earlyPbx(1000, 800, (invite, sdp) => invite.answer(sdp));
    const number = await trunkNumber(primary, fallback);
    const { outcome, started, settled } = await call(number);
    expect(outcome.answered).toBe(true);
    if (!outcome.answered) return;
    const packets = [...callerMedia.received];
    // The primary's 500 Hz first, then the fallback's 1 kHz, both before the answer.
    expect(heard(started, started + 700, packets).hz).toBeLessThan(550);
    expect(heard(settled - 500, settled, packets).hz).toBeGreaterThan(950);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(heard(settled + 100, settled + 500).hz).toBeGreaterThan(950);
    expect((await outcome.dialog.bye())?.status).toBe(200);
  }, 30_000);
});

describe("early media from a Dial's called party (dialMusic real)", () => {
  it("is what the caller hears instead of the ringback tone, until the called party's answer", async () => {
    const port = await earlyPbx(700, 1500, (invite, sdp) => invite.answer(sdp), 1000);
    app.serve('/answer', {
      body: `<Response><Dial timeout="10"><User>sip:agent@127.0.0.1:${port}</User></Dial></Response>`,
    });
    const { outcome, started, settled } = await call(APP_NUMBER);
    expect(outcome.answered).toBe(true);
    if (!outcome.answered) return;
    // The app answered at once; then the agent's 700 Hz while it was ringing, not 440 + 480.
    const bAnswered = await waitForTone(1000, settled, 5000);
    const before = heard(started + 300, bAnswered - 100);
    expect(before.frames).toBeGreaterThan(40);
    expect(before.hz).toBeGreaterThan(675);
    expect(before.hz).toBeLessThan(725);
    // After its answer, the agent's own 1 kHz through the call's bridge.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(heard(bAnswered + 100, bAnswered + 500).hz).toBeGreaterThan(975);
    expect((await outcome.dialog.bye())?.status).toBe(200);
  }, 30_000);

  it('gives the ringback tone back when that called party fails, until another one answers', async () => {
    const first = await earlyPbx(700, 1000, (invite) => invite.reject(503));
    const second = await ringingPhone(1000, 3500);
    app.serve('/answer', {
      body:
        '<Response><Dial timeout="10">' +
        `<User>sip:agent@127.0.0.1:${first}</User><User>sip:backup@127.0.0.1:${second}</User>` +
        '</Dial></Response>',
    });
    const { outcome, started } = await call(APP_NUMBER);
    expect(outcome.answered).toBe(true);
    if (!outcome.answered) return;
    const early = await waitForTone(700, started, 5000);
    const answered = await waitForTone(1000, early, 8000);
    // The first agent's 700 Hz; once it failed (a second later), the ringback tone (440 + 480
    // Hz) while the backup rings; then the backup.
    expect(heard(early, early + 600).hz).toBe(700);
    const between = samplesHeard(early + 1500, Math.min(early + 3000, answered - 100));
    const ringback = powerAt(between, 8000, 440) + powerAt(between, 8000, 480);
    expect(between.length).toBeGreaterThan(8000);
    expect(ringback).toBeGreaterThan(5 * powerAt(between, 8000, 700));
    expect(ringback).toBeGreaterThan(5 * powerAt(between, 8000, 1000));
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(heard(answered + 50, answered + 400).hz).toBeGreaterThan(975);
    expect((await outcome.dialog.bye())?.status).toBe(200);
  }, 30_000);
});

/** When the caller first heard `hz` after `from` (ms since its RTP peer opened). */
async function waitForTone(hz: number, from: number, withinMs: number): Promise<number> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const packets = callerMedia.received.filter((p) => p.at >= from);
    for (let i = 0; i + 5 <= packets.length; i++) {
      const found = heard(packets[i]!.at, packets[i + 4]!.at + 1, packets);
      if (found.hz !== null && Math.abs(found.hz - hz) < 40) return packets[i]!.at;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the caller never heard ${hz} Hz`);
}
