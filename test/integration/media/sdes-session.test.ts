import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../src/core/scheduler.js';
import { muLawDecode, muLawEncode } from '../../../src/media/codec/g711.js';
import { MediaSession } from '../../../src/media/pipeline/media-session.js';
import { FrameClock } from '../../../src/media/playout/frame-clock.js';
import { PcmSource } from '../../../src/media/playout/playout-source.js';
import { PortAllocator } from '../../../src/media/rtp/port-range.js';
import { parseRtpPacket, serializeRtpPacket } from '../../../src/media/rtp/rtp-packet.js';
import type { SdesKeys } from '../../../src/media/srtp/sdes-protection.js';
import { SrtpContext, type SrtpDropReason } from '../../../src/media/srtp/srtp-context.js';
import { chunks, concat, strongestFrequency, tone } from '../../support/signal.js';
import { until } from '../../support/wait.js';

/**
 * A leg keyed by SDES against a peer scripted from voxgate's SRTP contexts: the peer's key
 * unprotects what the peer sends, the leg's own key protects what it sends, on the leg's own
 * port (no ICE, no DTLS), and what is forged, replayed or sent before the keys is dropped.
 */
const PCMU = { encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const };
const SUITE = 'AES_CM_128_HMAC_SHA1_80' as const;
const key = () => ({ masterKey: randomBytes(16), masterSalt: randomBytes(14) });
const open: { close(): unknown }[] = [];

afterEach(async () => {
  for (const each of open.splice(0).reverse()) await each.close();
});

async function peerSocket(): Promise<{ socket: Socket; received: Buffer[]; port: number }> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const received: Buffer[] = [];
  socket.on('message', (data) => received.push(data));
  open.push({ close: () => new Promise<void>((resolve) => socket.close(() => resolve())) });
  return { socket, received, port: socket.address().port };
}

describe('an SDES-SRTP leg', () => {
  it('carries audio both ways under the two keys and drops forged, replayed and early packets', async () => {
    const scheduler = new ManualScheduler();
    const peer = await peerSocket();
    const dropped: SrtpDropReason[] = [];
    const base = 40000 + 2 * Math.floor(Math.random() * 5000);
    const session = await MediaSession.open(
      { formats: [PCMU], remote: { address: '127.0.0.1', port: peer.port }, sdes: 'required' },
      {
        allocator: new PortAllocator({ min: base, max: base + 9 }, '127.0.0.1'),
        clock: new FrameClock(scheduler),
        cname: 'sdes-test',
        scheduler,
        srtpTally: { srtp: (reason) => dropped.push(reason) },
      },
    );
    open.push(session);
    const heard: Int16Array[] = [];
    session.addPacketTap((pcm) => heard.push(pcm));
    let sequence = 100;
    const packet = (payload: Uint8Array) =>
      serializeRtpPacket({
        marker: false,
        payloadType: 0,
        sequenceNumber: sequence++,
        timestamp: sequence * 160,
        ssrc: 0x5de5,
        payload,
      });
    const send = (data: Buffer) => peer.socket.send(data, session.port, '127.0.0.1');
    const frames = [...chunks(tone(8000, 1000, 1, 8000), [160])].map(muLawEncode);

    // Before the keys: plain RTP in is dropped, and nothing goes out.
    for (const frame of frames.slice(0, 5)) send(packet(frame));
    void session.play(new PcmSource(tone(8000, 600, 2, 8000)));
    for (let i = 0; i < 3; i++) scheduler.advance(20);
    await until(() => session.stats.sdes!.unkeyed === 8);
    expect(session.stats.packetsReceived).toBe(0);

    const ours = key();
    const theirs = key();
    const keys: SdesKeys = { suite: SUITE, inbound: theirs, outbound: ours };
    session.update({ sdes: keys });
    const peerOut = new SrtpContext({ suite: SUITE, ...theirs, direction: 'outbound' });
    const peerIn = new SrtpContext({ suite: SUITE, ...ours, direction: 'inbound' });
    const sent: Buffer[] = [];
    for (const frame of frames.slice(5, 50)) {
      const protectedPacket = peerOut.protectRtp(packet(frame));
      sent.push(protectedPacket);
      send(protectedPacket);
    }
    await until(() => heard.length === 45);
    expect(strongestFrequency(concat(heard).subarray(800), 8000, 10)).toBe(1000);

    // Forged tags and replays: dropped, counted by reason for the worker's /metrics.
    for (let i = 0; i < 5; i++) {
      const forged = Buffer.from(peerOut.protectRtp(packet(frames[i]!)));
      forged[forged.length - 1]! ^= 0x01;
      send(forged);
    }
    for (const again of sent.slice(10, 13)) send(Buffer.from(again));
    await until(() => dropped.length === 8);
    expect(session.stats.sdes!.srtpDropped).toEqual({ auth: 5, replay: 3, malformed: 0 });
    expect(dropped.filter((r) => r === 'auth')).toHaveLength(5);
    expect(session.stats.packetsReceived).toBe(45);

    // The same keys again (a re-INVITE that keeps them) keep the replay window.
    session.update({ sdes: keys });
    send(Buffer.from(sent[20]!));
    await until(() => session.stats.sdes!.srtpDropped.replay === 4);

    // What the leg sends: SRTP the peer's copy of our key opens, 10 bytes of tag longer.
    for (let i = 0; i < 50; i++) scheduler.advance(20);
    await until(() => peer.received.filter((d) => d[1]! < 192).length >= 50);
    const rtp = peer.received.filter((d) => (d[1]! & 0x7f) < 64);
    const opened = rtp.map((d) => peerIn.unprotectRtp(Buffer.from(d)));
    expect(opened.filter((p) => typeof p === 'string')).toEqual([]);
    const packets = opened.map((p) => parseRtpPacket(p as Buffer));
    expect(rtp.every((d, i) => d.length === packets[i]!.payload.length + 12 + 10)).toBe(true);
    const audio = concat(packets.map((p) => muLawDecode(p.payload)));
    expect(strongestFrequency(audio.subarray(800, 8000), 8000, 10)).toBe(600);
  });

  it('with SRTP optional, goes back to plain RTP both ways when an update drops the keys', async () => {
    const scheduler = new ManualScheduler();
    const peer = await peerSocket();
    const base = 40000 + 2 * Math.floor(Math.random() * 5000);
    const session = await MediaSession.open(
      { formats: [PCMU], remote: { address: '127.0.0.1', port: peer.port }, sdes: 'optional' },
      {
        allocator: new PortAllocator({ min: base, max: base + 9 }, '127.0.0.1'),
        clock: new FrameClock(scheduler),
        cname: 'sdes-optional-test',
        scheduler,
      },
    );
    open.push(session);
    const heard: Int16Array[] = [];
    session.addPacketTap((pcm) => heard.push(pcm));
    const ours = key();
    const theirs = key();
    session.update({ sdes: { suite: SUITE, inbound: theirs, outbound: ours } });
    void session.play(new PcmSource(tone(8000, 600, 3, 8000)));
    for (let i = 0; i < 10; i++) scheduler.advance(20);
    await until(() => peer.received.length >= 10);
    const peerIn = new SrtpContext({ suite: SUITE, ...ours, direction: 'inbound' });
    const rtpOf = (datagrams: Buffer[]) => datagrams.filter((d) => (d[1]! & 0x7f) < 64);
    expect(
      rtpOf(peer.received).every((d) => typeof peerIn.unprotectRtp(Buffer.from(d)) !== 'string'),
    ).toBe(true);

    // A re-INVITE to RTP/AVP: no keys. What the leg sends is plain RTP, and plain RTP is heard.
    session.update({ sdes: null });
    const before = peer.received.length;
    for (let i = 0; i < 20; i++) scheduler.advance(20);
    await until(() => peer.received.length >= before + 20);
    const plain = rtpOf(peer.received.slice(before + 2)).map((d) => parseRtpPacket(d));
    expect(plain.every((p) => p.payload.length === 160)).toBe(true);
    const audio = concat(plain.map((p) => muLawDecode(p.payload)));
    expect(strongestFrequency(audio, 8000, 10)).toBe(600);
    let sequence = 500;
    for (const frame of [...chunks(tone(8000, 1000, 0.4, 8000), [160])].map(muLawEncode)) {
      const packet = serializeRtpPacket({
        marker: false,
        payloadType: 0,
        sequenceNumber: sequence++,
        timestamp: sequence * 160,
        ssrc: 0x9141,
        payload: frame,
      });
      peer.socket.send(packet, session.port, '127.0.0.1');
    }
    await until(() => heard.length >= 20);
    expect(strongestFrequency(concat(heard).subarray(800), 8000, 10)).toBe(1000);
  });
});
