import { afterEach, describe, expect, it } from 'vitest';
import { muLawDecode, muLawEncode } from '../../../src/media/codec/g711.js';
import { OpusDecoder, OpusEncoder } from '../../../src/media/codec/opus.js';
import { generateDtlsCertificate } from '../../../src/media/dtls/dtls-certificate.js';
import type { AudioFormat } from '../../../src/media/pipeline/audio-format.js';
import { MediaWorkerPool } from '../../../src/media/worker/media-worker-pool.js';
import type { DropSnapshot } from '../../../src/media/worker/drop-counts.js';
import type { SessionEvent } from '../../../src/media/worker/protocol.js';
import { createIceCredentials } from '../../../src/media/webrtc/ice/index.js';
import type { WebrtcTransportSpec } from '../../../src/media/webrtc/webrtc-transport.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { chunks, concat, strongestFrequency, tone } from '../../support/signal.js';
import { sleep, until } from '../../support/wait.js';
import { WebrtcTestPeer, type GatewayTransport } from '../../support/webrtc-peer.js';

/**
 * WebRTC legs in a real worker thread against a peer scripted from voxgate's own blocks (a
 * nominating STUN check, a DTLS endpoint, SRTP): ICE selects, DTLS keys SRTP, audio crosses
 * both ways encrypted; forged packets are dropped and counted on the worker's report; a lost
 * consent or a wrong certificate ends the leg's transport with an event naming why.
 */
const PCMU: AudioFormat = { encoding: 'PCMU', payloadType: 0, rate: 8000 };
const OPUS: AudioFormat = { encoding: 'opus', payloadType: 111, rate: 16000 };
const certificate = generateDtlsCertificate();

let pool: MediaWorkerPool | null = null;
const closers: (() => Promise<void>)[] = [];
let events: [string, SessionEvent][] = [];
let drops: DropSnapshot[] = [];

afterEach(async () => {
  await pool?.close();
  pool = null;
  await Promise.all(closers.splice(0).map((close) => close()));
  events = [];
  drops = [];
});

function startPool(): MediaWorkerPool {
  const base = 20000 + 2 * Math.floor(Math.random() * 10000);
  pool = new MediaWorkerPool(
    {
      onEvent: (sessionId, event) => events.push([sessionId, event]),
      onLatency: (report) => {
        if (report.drops) drops.push(report.drops);
      },
    },
    {
      size: 1,
      settings: {
        rtpPorts: { min: base, max: base + 19 },
        rtpHost: '127.0.0.1',
        cname: 'webrtc-session-test',
        dtls: { certificate, handshakeTimeoutMs: 3000 },
      },
    },
  );
  return pool;
}

async function webrtcPeer(): Promise<WebrtcTestPeer> {
  const peer = await WebrtcTestPeer.open();
  closers.push(() => peer.close());
  return peer;
}

async function rtpPeer(): Promise<RtpPeer> {
  const peer = await RtpPeer.open();
  closers.push(() => peer.close());
  return peer;
}

/** A WebRTC leg answering the peer's offer (a=setup:active in our answer: we are the client). */
async function answeringLeg(
  pool: MediaWorkerPool,
  id: string,
  peer: WebrtcTestPeer,
  extra: Partial<WebrtcTransportSpec> = {},
): Promise<GatewayTransport> {
  const ice = createIceCredentials();
  const webrtc: WebrtcTransportSpec = {
    localIce: ice,
    remoteUfrag: peer.ice.ufrag,
    remoteFingerprints: [peer.fingerprint],
    role: 'client',
    ...extra,
  };
  const opened = await pool.createSession(id, { formats: [OPUS], webrtc });
  return { port: opened.port, ice, fingerprint: certificate.sdpFingerprint };
}

function opusFrames(pcm: Int16Array): Uint8Array[] {
  const encoder = new OpusEncoder(16000);
  return [...chunks(pcm, [320])].map((frame) => encoder.encode(frame));
}

function opusHeard(peer: WebrtcTestPeer): Int16Array {
  const decoder = new OpusDecoder(16000);
  return concat(
    peer.received.filter((p) => p.payloadType === 111).map((p) => decoder.decode(p.payload)),
  );
}

/** What was heard from the first loud sample on, 100 ms in. */
function settled(pcm: Int16Array, rate: number): Int16Array {
  return pcm.subarray(pcm.findIndex((s) => Math.abs(s) > 2000) + rate / 10);
}

describe('WebRTC legs in a worker thread', () => {
  it('connects ICE and DTLS as the answerer and carries SRTP audio both ways across a bridge', async () => {
    const pool = startPool();
    const [browser, phone] = [await webrtcPeer(), await rtpPeer()];
    const gateway = await answeringLeg(pool, 'w', browser);
    const connected = browser.startDtls(gateway, 'server');
    // Nothing but the check's answer comes before ICE selects and DTLS connects.
    await sleep(100);
    expect(browser.stunResponses).toHaveLength(0);
    browser.check(gateway);
    await connected;
    expect(browser.stunResponses.map((m) => m.messageClass)).toEqual(['success']);
    expect(browser.profileSuite).toBe('AEAD_AES_128_GCM');

    const b = await pool.createSession(
      'b',
      { formats: [PCMU], remote: phone.address },
      { near: 'w' },
    );
    await pool.send({ type: 'bridge', sessionId: 'w', peerId: 'b' });
    await Promise.all([
      browser.stream(gateway.port, opusFrames(tone(16000, 1000, 1.5, 8000)), {
        payloadType: 111,
        samples: 960,
      }),
      phone.stream(b.port, [...chunks(tone(8000, 600, 1.5, 8000), [160])].map(muLawEncode), {
        payloadType: 0,
      }),
    ]);
    await sleep(200);

    const atPhone = settled(
      concat(phone.received.filter((p) => p.payloadType === 0).map((p) => muLawDecode(p.payload))),
      8000,
    );
    expect(atPhone.length).toBeGreaterThan(4000);
    expect(strongestFrequency(atPhone.subarray(0, 4000), 8000, 10)).toBe(1000);
    const atBrowser = settled(opusHeard(browser), 16000);
    expect(atBrowser.length).toBeGreaterThan(8000);
    expect(strongestFrequency(atBrowser.subarray(0, 8000), 16000, 10)).toBe(600);
    expect(browser.refused).toEqual([]);
    expect(browser.earlyMedia).toBe(0);

    const stats = await pool.send({ type: 'sessionStats', sessionId: 'w' });
    expect(stats.webrtc).toMatchObject({
      ice: 'connected',
      dtls: 'connected',
      srtpDropped: { auth: 0, replay: 0, malformed: 0 },
    });
    expect(stats.packetsReceived).toBe(75);
    expect(events.filter(([, e]) => e.type === 'transportFailed')).toEqual([]);
  });

  it('goes on as plain RTP on its port when a plain phone answers its offer instead (webrtc: null)', async () => {
    const pool = startPool();
    const phone = await rtpPeer();
    // An offering WebRTC leg: its own credentials only, as before any answer.
    const opened = await pool.createSession('w', {
      formats: [PCMU],
      webrtc: { localIce: createIceCredentials() },
    });
    const ulaw = () => [...chunks(tone(8000, 600, 0.5, 8000), [160])].map(muLawEncode);
    // Before: plain RTP is no WebRTC media, and is not taken.
    await phone.stream(opened.port, ulaw(), { payloadType: 0 });
    expect((await pool.send({ type: 'sessionStats', sessionId: 'w' })).packetsReceived).toBe(0);

    await pool.send({
      type: 'updateSession',
      sessionId: 'w',
      changes: { webrtc: null, formats: [PCMU], remote: phone.address },
    });
    const played = pool.send({
      type: 'play',
      sessionId: 'w',
      source: { kind: 'tone', frequencies: [1000], durationMs: 600 },
    });
    await phone.stream(opened.port, ulaw(), { payloadType: 0 });
    await played;

    const stats = await pool.send({ type: 'sessionStats', sessionId: 'w' });
    expect(stats.packetsReceived).toBe(25);
    expect(stats.webrtc).toBeUndefined();
    const heard = settled(
      concat(phone.received.filter((p) => p.payloadType === 0).map((p) => muLawDecode(p.payload))),
      8000,
    );
    expect(heard.length).toBeGreaterThan(3200);
    expect(strongestFrequency(heard.subarray(0, 3200), 8000, 10)).toBe(1000);
    expect(events.filter(([, e]) => e.type === 'transportFailed')).toEqual([]);
  });

  it('drops and counts SRTP with a bad tag or a replayed index and ICE checks with a bad password; plays what it plays encrypted', async () => {
    const pool = startPool();
    const browser = await webrtcPeer();
    const gateway = await answeringLeg(pool, 'w', browser);
    const connected = browser.startDtls(gateway, 'server');
    browser.check(gateway);
    await connected;

    const played = pool.send({
      type: 'play',
      sessionId: 'w',
      source: { kind: 'tone', frequencies: [800], durationMs: 1000 },
    });
    const frames = opusFrames(tone(16000, 400, 0.3, 8000));
    const sent: Buffer[] = [];
    for (const [i, frame] of frames.entries()) {
      // Every third packet has its last tag byte flipped: forged, or corrupted on the way.
      const forged = i % 3 === 2;
      const srtp = browser.sendRtp(gateway.port, frame, {
        payloadType: 111,
        samples: 960,
        ...(forged && { tamper: (srtp: Buffer) => void (srtp[srtp.length - 1]! ^= 0xff) }),
      });
      sent.push(srtp);
      await sleep(20);
    }
    // The first packet again: an index the replay window has seen.
    browser.sendRaw(sent[0]!, gateway.port);
    browser.check(gateway, { key: 'not-the-gateways-password-at-all' });
    await played;
    await until(() => drops.length > 0, 3000);

    expect(frames).toHaveLength(15);
    const stats = await pool.send({ type: 'sessionStats', sessionId: 'w' });
    expect(stats.packetsReceived).toBe(10);
    expect(stats.webrtc?.srtpDropped).toEqual({ auth: 5, replay: 1, malformed: 0 });
    const total = (pick: (d: DropSnapshot) => number | undefined) =>
      drops.reduce((sum, d) => sum + (pick(d) ?? 0), 0);
    expect(total((d) => d.srtp.auth)).toBe(5);
    expect(total((d) => d.srtp.replay)).toBe(1);
    expect(total((d) => d.ice['bad-integrity'])).toBe(1);
    // RFC 8489 9.1.3: a check with a wrong MESSAGE-INTEGRITY is answered 401.
    expect(browser.stunResponses.map((m) => m.messageClass)).toEqual(['success', 'error']);

    const heard = settled(opusHeard(browser), 16000);
    expect(heard.length).toBeGreaterThan(8000);
    expect(strongestFrequency(heard.subarray(0, 8000), 16000, 10)).toBe(800);
  });

  it('takes a ClientHello that comes before the answer (our offer), once the answer gives the role', async () => {
    const pool = startPool();
    const browser = await webrtcPeer();
    const ice = createIceCredentials();
    const opened = await pool.createSession('w', { formats: [OPUS], webrtc: { localIce: ice } });
    const gateway = { port: opened.port, ice, fingerprint: certificate.sdpFingerprint };
    browser.check(gateway);
    const connected = browser.startDtls(gateway, 'client');
    await sleep(150);
    expect(browser.stunResponses.map((m) => m.messageClass)).toEqual(['success']);
    await pool.send({
      type: 'updateSession',
      sessionId: 'w',
      changes: {
        webrtc: {
          remoteUfrag: browser.ice.ufrag,
          remoteFingerprints: [browser.fingerprint],
          role: 'server',
        },
      },
    });
    await connected;
    await pool.send({
      type: 'play',
      sessionId: 'w',
      source: { kind: 'tone', frequencies: [1200], durationMs: 600 },
    });
    await sleep(100);
    const heard = settled(opusHeard(browser), 16000);
    expect(heard.length).toBeGreaterThan(4800);
    expect(strongestFrequency(heard.subarray(0, 4800), 16000, 10)).toBe(1200);
    expect(browser.refused).toEqual([]);
  });

  it('ends the transport when consent is lost, and sends nothing more', async () => {
    const pool = startPool();
    const browser = await webrtcPeer();
    const gateway = await answeringLeg(pool, 'w', browser, { consentTimeoutMs: 1000 });
    const connected = browser.startDtls(gateway, 'server');
    browser.check(gateway);
    await connected;
    await until(() => browser.received.length > 0, 2000);
    await until(() => events.some(([, e]) => e.type === 'transportFailed'), 3000);

    const failed = events.filter(([, e]) => e.type === 'transportFailed');
    expect(failed).toEqual([
      [
        'w',
        {
          type: 'transportFailed',
          kind: 'consent-lost',
          message: expect.stringMatching(/^ICE consent lost: no valid check for \d+ ms/),
        },
      ],
    ]);
    // RFC 7675 5.1: once consent has expired, nothing more is sent.
    const count = browser.received.length;
    await sleep(300);
    expect(browser.received.length).toBe(count);
  });

  it('ends the transport when the peer presents another certificate than its fingerprint', async () => {
    const pool = startPool();
    const browser = await webrtcPeer();
    const other = generateDtlsCertificate('someone-else');
    const gateway = await answeringLeg(pool, 'w', browser, {
      remoteFingerprints: [other.sdpFingerprint],
    });
    void browser.startDtls(gateway, 'server').catch(() => undefined);
    browser.check(gateway);
    await until(() => events.some(([, e]) => e.type === 'transportFailed'), 3000);
    const [[, event]] = events.filter(([, e]) => e.type === 'transportFailed') as [
      [string, SessionEvent & { kind: string }],
    ];
    expect(event.kind).toBe('dtls-failed');
    expect(browser.received).toEqual([]);
  });

  it('runs a new DTLS association when a re-INVITE brings another certificate, and plays to the new peer', async () => {
    const pool = startPool();
    const [first, second] = [await webrtcPeer(), await webrtcPeer()];
    const gateway = await answeringLeg(pool, 'w', first);
    const connected = first.startDtls(gateway, 'server');
    first.check(gateway);
    await connected;
    // Another peer connection (a new certificate, new ICE credentials) takes the call over:
    // its re-offer restarts ICE, and our answer took the client role again.
    const ice = createIceCredentials();
    await pool.send({
      type: 'updateSession',
      sessionId: 'w',
      changes: {
        webrtc: {
          localIce: ice,
          remoteUfrag: second.ice.ufrag,
          remoteFingerprints: [second.fingerprint],
          role: 'client',
        },
      },
    });
    const moved = { ...gateway, ice };
    const rekeyed = second.startDtls(moved, 'server');
    second.check(moved);
    await rekeyed;
    const heardBefore = first.received.length;
    await pool.send({
      type: 'play',
      sessionId: 'w',
      source: { kind: 'tone', frequencies: [800], durationMs: 600 },
    });
    const atSecond = settled(opusHeard(second), 16000);
    expect(atSecond.length).toBeGreaterThan(4000);
    expect(strongestFrequency(atSecond.subarray(0, 4000), 16000, 10)).toBe(800);
    // Nothing more went to the first peer, and nothing failed.
    expect(first.received.length).toBe(heardBefore);
    expect(second.refused).toEqual([]);
    expect(events.filter(([, e]) => e.type === 'transportFailed')).toEqual([]);
  });

  it('gives a peer that waits as a DTLS server too the handshake timeout from its nomination', async () => {
    const pool = startPool();
    const browser = await webrtcPeer();
    // Both sides passive: the peer's answer got the roles wrong, so no ClientHello ever comes.
    const gateway = await answeringLeg(pool, 'w', browser, { role: 'server' });
    browser.check(gateway);
    await until(() => events.some(([, e]) => e.type === 'transportFailed'), 6000);
    expect(events.filter(([, e]) => e.type === 'transportFailed')).toEqual([
      [
        'w',
        {
          type: 'transportFailed',
          kind: 'dtls-failed',
          message: expect.stringMatching(/did not complete within 3000 ms \(0 datagrams received/),
        },
      ],
    ]);
  });

  it("ends that leg alone when none of the peer's fingerprints can be checked, and takes the one that can among others", async () => {
    const pool = startPool();
    const [stranger, browser] = [await webrtcPeer(), await webrtcPeer()];
    // Too short for its hash function: nothing to check a certificate with.
    const bad = await answeringLeg(pool, 'bad', stranger, {
      remoteFingerprints: ['sha-256 AB:CD'],
    });
    // RFC 8122 5: a hash function voxgate does not check beside one it does.
    const good = await answeringLeg(pool, 'good', browser, {
      remoteFingerprints: [`md5 ${'AB:'.repeat(15)}AB`, browser.fingerprint],
    });
    // The nomination starts DTLS, which cannot start: the leg ends, the worker goes on.
    stranger.check(bad);
    await until(() => events.some(([id, e]) => id === 'bad' && e.type === 'transportFailed'), 3000);
    expect(events.filter(([, e]) => e.type !== 'dtmf')).toEqual([
      [
        'bad',
        {
          type: 'transportFailed',
          kind: 'dtls-failed',
          message: expect.stringMatching(/^DTLS cannot start: Expected 32 bytes in a sha-256/),
        },
      ],
    ]);
    const connected = browser.startDtls(good, 'server');
    browser.check(good);
    await connected;
    await until(() => browser.received.length > 0, 3000);
    expect(events.filter(([, e]) => e.type === 'ended' || e.type === 'warning')).toEqual([]);
  });
});
