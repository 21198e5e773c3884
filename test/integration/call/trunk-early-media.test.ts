import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { muLawDecode, muLawEncode } from '../../../src/media/codec/g711.js';
import type { IncomingInvite } from '../../../src/sip/ua/incoming-invite.js';
import type { InviteProgress } from '../../../src/sip/ua/outgoing-invite.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer, type ReceivedRtp } from '../../support/rtp-peer.js';
import { strongestFrequency, tone } from '../../support/signal.js';
import { openSipPeer, type SipPeer } from '../../support/sip-peer.js';

/**
 * A PBX behind an inbound trunk that answers with early media (RFC 3960: a 183 with SDP and
 * audio before the 200, an announcement or its own ringback): the carrier's caller gets a 183
 * with the gateway's SDP and hears that audio before the answer, and after it the call's own.
 * The PBXs and the caller are SIP user agents of the test with plain PCMU RTP peers.
 */
let gw: TestGateway;
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
});

afterEach(async () => {
  for (const pbx of pbxs.splice(0)) {
    pbx.quiet();
    await pbx.sip.stack.close();
    await pbx.media.close();
  }
  callerMedia.received.length = 0;
});

afterAll(async () => {
  await caller?.stack.close();
  await callerMedia?.close();
  await gw?.close();
});

const account = () => `/v1/Account/${gw.main.id}`;

/** A PBX that sends 183 with SDP and `hz` of tone at once, then does `then` after `afterMs`. */
async function earlyPbx(
  hz: number,
  afterMs: number,
  then: (invite: IncomingInvite, sdp: string) => void,
): Promise<number> {
  const sip = await openSipPeer();
  const media = await RtpPeer.open();
  const timers: NodeJS.Timeout[] = [];
  pbxs.push({ sip, media, quiet: () => timers.forEach(clearInterval) });
  sip.uas.onInvite = (invite) => {
    const sdp = pcmu(media.port);
    invite.progress(sdp);
    // Its tone from the 183 on, every 20 ms, until the test is over.
    const frames = [...frames20ms(tone(8000, hz, 1, 8000))];
    let next = 0;
    const to = audioPort(invite.offer);
    timers.push(
      setInterval(() => media.send(to, frames[next++ % frames.length]!, { payloadType: 0 }), 20),
      setTimeout(() => then(invite, sdp), afterMs),
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

/** The carrier's call to `number`, sending silence; what came back, and when. */
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

/** The dominant frequency of what the caller heard between two moments (ms since it opened). */
function heard(from: number, to: number, packets: readonly ReceivedRtp[] = callerMedia.received) {
  const pcm = packets
    .filter((p) => p.at >= from && p.at < to && p.payloadType === 0)
    .map((p) => muLawDecode(p.payload));
  const samples = Int16Array.from(pcm.flatMap((frame) => [...frame]));
  const loud = samples.some((s) => Math.abs(s) > 1000);
  return { frames: pcm.length, hz: loud ? strongestFrequency(samples, 8000, 25) : null };
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
    expect(live.body.calls ?? []).toEqual([]);
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
