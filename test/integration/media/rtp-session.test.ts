import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../src/core/scheduler.js';
import { PortAllocator } from '../../../src/media/rtp/port-range.js';
import type { RtcpPacket } from '../../../src/media/rtp/rtcp-packet.js';
import {
  parseRtpPacket,
  serializeRtpPacket,
  type RtpPacket,
} from '../../../src/media/rtp/rtp-packet.js';
import {
  RtpSession,
  type RtpSessionListener,
  type RtpSessionOptions,
} from '../../../src/media/rtp/rtp-session.js';
import { startLossyUdpRelay, type LossyUdpRelay } from '../../support/lossy-udp-relay.js';
import { until } from '../../support/wait.js';

const HOST = '127.0.0.1';
const allocator = new PortAllocator({ min: 30000, max: 39999 }, HOST);

interface Peer {
  session: RtpSession;
  packets: RtpPacket[];
  rtcp: RtcpPacket[][];
  timeouts: number[];
}

const opened: RtpSession[] = [];
const sockets: Socket[] = [];
const relays: LossyUdpRelay[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  for (const socket of sockets.splice(0)) socket.close();
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

async function peer(
  options: Partial<RtpSessionOptions> = {},
  listener: RtpSessionListener = {},
): Promise<Peer> {
  const packets: RtpPacket[] = [];
  const rtcp: RtcpPacket[][] = [];
  const timeouts: number[] = [];
  const session = await RtpSession.open(
    { allocator, clockRate: 8000, cname: 'peer@voxgate.test', rtcpIntervalMs: 60_000, ...options },
    {
      onPacket: (packet) => packets.push({ ...packet, payload: Uint8Array.from(packet.payload) }),
      onRtcp: (packets) => rtcp.push(packets),
      onMediaTimeout: (ms) => timeouts.push(ms),
      ...listener,
    },
  );
  opened.push(session);
  return { session, packets, rtcp, timeouts };
}

const at = (session: RtpSession): { address: string; port: number } => ({
  address: HOST,
  port: session.port,
});
const frame = (i: number): Uint8Array => new Uint8Array(160).fill(i & 0xff);

function rawSocket(): Promise<{ socket: Socket; port: number; received: Buffer[] }> {
  const socket = createSocket('udp4');
  sockets.push(socket);
  const received: Buffer[] = [];
  socket.on('message', (data) => received.push(data));
  return new Promise((resolve) =>
    socket.bind(0, HOST, () => resolve({ socket, port: socket.address().port, received })),
  );
}

describe('RtpSession over UDP', () => {
  it('binds an even port with RTCP on the next', async () => {
    const { session } = await peer();
    expect(session.port % 2).toBe(0);
    expect(session.rtcpPort).toBe(session.port + 1);
  });

  it('carries packets between two sessions in order with advancing sequence and timestamp', async () => {
    const a = await peer();
    const b = await peer();
    a.session.setRemote(at(b.session));
    b.session.setRemote(at(a.session));
    for (let i = 0; i < 20; i++)
      a.session.send(frame(i), { payloadType: 0, samples: 160, marker: i === 0 });
    await until(() => b.packets.length === 20);
    const first = b.packets[0]!;
    expect(first.marker).toBe(true);
    expect(first.ssrc).toBe(a.session.sender.ssrc);
    b.packets.forEach((packet, i) => {
      expect(packet.sequenceNumber).toBe((first.sequenceNumber + i) & 0xffff);
      expect(packet.timestamp).toBe((first.timestamp + i * 160) >>> 0);
      expect(packet.payload[0]).toBe(i);
    });
    const stats = b.session.receivers.get(a.session.sender.ssrc)!;
    expect(stats.valid).toBe(true);
    expect(stats.lost).toBe(0);
  });

  it('latches onto the source port RTP comes from instead of the SDP port', async () => {
    const sdpTarget = await rawSocket();
    const natted = await rawSocket();
    const latched: number[] = [];
    const c = await peer({}, { onLatched: (from) => latched.push(from.port) });
    c.session.setRemote({ address: HOST, port: sdpTarget.port });
    c.session.send(frame(0), { payloadType: 0, samples: 160 });
    await until(() => sdpTarget.received.length === 1);
    // The peer's media comes from another port than its SDP said: behind a NAT.
    for (let seq = 500; seq < 503; seq++)
      natted.socket.send(
        serializeRtpPacket({
          payloadType: 8,
          sequenceNumber: seq,
          timestamp: seq * 160,
          ssrc: 77,
          payload: frame(seq),
        }),
        c.session.port,
        HOST,
      );
    await until(() => c.packets.length === 3);
    expect(latched).toEqual([natted.port]);
    expect(c.session.destination).toEqual({ address: HOST, port: natted.port });
    c.session.send(frame(1), { payloadType: 8, samples: 160 });
    await until(() => natted.received.length === 1);
    expect(parseRtpPacket(natted.received[0]!).payloadType).toBe(8);
    expect(sdpTarget.received).toHaveLength(1);
    // Once latched, RTP from elsewhere is not taken.
    natted.received.length = 0;
    sdpTarget.socket.send(
      serializeRtpPacket({
        payloadType: 0,
        sequenceNumber: 1,
        timestamp: 0,
        ssrc: 99,
        payload: frame(9),
      }),
      c.session.port,
      HOST,
    );
    await until(() => c.session.counters.foreign === 1);
    expect(c.packets).toHaveLength(3);
  });

  it('raises a media timeout after N seconds without RTP, and again after media resumes and stops', async () => {
    const scheduler = new ManualScheduler(1_000_000);
    const a = await peer();
    const b = await peer({ scheduler, mediaTimeoutMs: 3000 });
    a.session.setRemote(at(b.session));
    scheduler.advance(2999);
    expect(b.timeouts).toEqual([]);
    scheduler.advance(1);
    expect(b.timeouts).toEqual([3000]);
    scheduler.advance(10_000);
    expect(b.timeouts).toHaveLength(1);
    a.session.send(frame(0), { payloadType: 0, samples: 160 });
    await until(() => b.packets.length === 1);
    scheduler.advance(2000);
    a.session.send(frame(1), { payloadType: 0, samples: 160 });
    await until(() => b.packets.length === 2);
    scheduler.advance(2999);
    expect(b.timeouts).toHaveLength(1);
    scheduler.advance(1);
    expect(b.timeouts).toEqual([3000, 3000]);
  });

  it('exchanges SR and RR with the loss it saw when packets are dropped on purpose', async () => {
    const scheduler = new ManualScheduler(1_700_000_000_000);
    const a = await peer({ scheduler });
    const b = await peer({ scheduler });
    a.session.setRemote(at(b.session));
    b.session.setRemote(at(a.session));
    let sent = 0;
    for (let i = 0; i < 100; i++) {
      scheduler.advance(20);
      // Every tenth frame is lost on the way: its number is used but never sent.
      if (i % 10 === 5) a.session.sender.advance(160, 160, scheduler.now());
      else {
        a.session.send(frame(i), { payloadType: 0, samples: 160 });
        sent++;
      }
    }
    await until(() => b.packets.length === sent);
    await a.session.sendReport();
    await until(() => b.rtcp.length === 1);
    const [sr, sdes] = b.rtcp[0]!;
    expect(sr).toMatchObject({
      type: 'sr',
      ssrc: a.session.sender.ssrc,
      packetCount: 100,
      octetCount: 16000,
    });
    expect(sdes).toMatchObject({ type: 'sdes', chunks: [{ ssrc: a.session.sender.ssrc }] });
    scheduler.advance(250);
    await b.session.sendReport();
    await until(() => a.session.remoteReports.size === 1);
    const block = a.session.remoteReports.get(b.session.sender.ssrc)!;
    // Probation took the first packet; 99 expected from the base, 10 lost.
    expect(block.cumulativeLost).toBe(10);
    expect(block.fractionLost).toBe(Math.floor((10 * 256) / 99));
    expect(block.lastSenderReport).not.toBe(0);
    expect(block.delaySinceLastSenderReport).toBe(Math.floor(0.25 * 65536));
    expect(a.rtcp[0]![0]!.type).toBe('rr');
  });

  it('reports on its own timer and says BYE on close', async () => {
    const a = await peer({ rtcpIntervalMs: 40 });
    const b = await peer({ rtcpIntervalMs: 40 });
    a.session.setRemote(at(b.session));
    b.session.setRemote(at(a.session));
    for (let i = 0; i < 5; i++) a.session.send(frame(i), { payloadType: 0, samples: 160 });
    await until(() => b.rtcp.length >= 2 && a.rtcp.length >= 2);
    expect(b.rtcp.some(([first]) => first?.type === 'sr')).toBe(true);
    await a.session.close('done');
    await until(() => b.rtcp.some((packets) => packets.some((p) => p.type === 'bye')));
    const bye = b.rtcp.flat().find((p) => p.type === 'bye');
    expect(bye).toEqual({ type: 'bye', ssrcs: [a.session.sender.ssrc], reason: 'done' });
  });

  it('counts what is lost through a lossy relay, latched onto the relay', async () => {
    const a = await peer();
    const b = await peer();
    const relay = await startLossyUdpRelay({
      target: { host: HOST, port: b.session.port },
      dropRate: 0.2,
      seed: 7,
    });
    relays.push(relay);
    a.session.setRemote({ address: HOST, port: relay.port });
    b.session.setRemote(at(a.session));
    for (let i = 0; i < 200; i++) a.session.send(frame(i), { payloadType: 0, samples: 160 });
    await until(() => relay.counts().upstream.forwarded + relay.counts().upstream.dropped === 200);
    const { forwarded } = relay.counts().upstream;
    await until(() => b.packets.length === forwarded);
    const stats = b.session.receivers.get(a.session.sender.ssrc)!;
    // A.3's loss runs from the first packet past probation to the highest received.
    expect(stats.extendedHighestSequence & 0xffff).toBe(b.packets.at(-1)!.sequenceNumber);
    expect(stats.lost).toBe(stats.expected - stats.received);
    expect(stats.lost).toBeGreaterThan(20);
    expect(stats.lost).toBeLessThanOrEqual(relay.counts().upstream.dropped);
    expect(b.session.destination?.port).not.toBe(a.session.port);
  });
});
