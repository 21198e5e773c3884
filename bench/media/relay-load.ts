/**
 * The load process of bench:media-relay (forked by LoadProcess): sends PCMU RTP to the
 * gateway's legs from a few UDP sockets, or SRTP with Opus to WebRTC legs it connected (ICE,
 * DTLS), and counts the RTP that comes back to any of them or to its sink sockets. Driven
 * over IPC; see LoadRequest.
 */
import { createSocket, type Socket } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import type {
  LegArrival,
  LegToConnect,
  LoadCounts,
  LoadMode,
  LoadReplies,
  LoadRequest,
} from './relay-load-client.js';
import {
  OPUS_FRAME,
  OPUS_PAYLOAD_TYPE,
  OPUS_SAMPLES_PER_FRAME,
  WebrtcLegs,
} from './relay-load-webrtc.js';

const HOST = '127.0.0.1';
const PAYLOAD_BYTES = 160;
const PACKET_BYTES = 12 + PAYLOAD_BYTES;
const BUFFER_BYTES = 4 * 1024 * 1024;
/** Packets sent per turn of the event loop flat out, so replies and sinks still get a turn. */
const MAX_BATCH = 64;
/** A socket with this many sends queued in libuv is skipped for the turn. */
const MAX_QUEUED = 256;
/** A rate plan this far behind drops what it owes rather than bursting it. */
const MAX_BEHIND_MS = 50;
const LATE_GAP_MS = 30;
/** How long a leg being connected has to send its first RTP. */
const FIRST_PACKET_TIMEOUT_MS = 5000;

interface Stream {
  port: number;
  socket: Socket;
  ssrc: number;
  sequence: number;
  timestamp: number;
  first: boolean;
  /** A WebRTC leg: Opus, SRTP-protected. */
  secure: boolean;
}

const senders: Socket[] = [];
const sinks: Socket[] = [];
const payload = Buffer.alloc(PAYLOAD_BYTES, 0xff); // mu-law silence
const counts = { sent: 0, received: 0, skipped: 0, lateGaps: 0, gaps: 0, maxGapMs: 0 };
const lastArrival = new Map<number, number>();
/** Each target's stream lives across plans: a leg latches onto the socket it first hears from. */
const streams = new Map<number, Stream>();
let trackGaps = false;
let run = 0;
const webrtc = new WebrtcLegs();
/** Legs being connected, by gateway port: called with the arrival of their first RTP. */
const firstPackets = new Map<number, (at: number) => void>();
/** An absolute time in ms that the gateway process reads the same way. */
const absoluteNow = () => performance.timeOrigin + performance.now();

function openSocket(): Promise<Socket> {
  const socket = createSocket({
    type: 'udp4',
    recvBufferSize: BUFFER_BYTES,
    sendBufferSize: BUFFER_BYTES,
  });
  socket.on('message', (data, from) => {
    if (webrtc.handshake(data, from.port)) return;
    const type = data[1]! & 0x7f;
    if (type === OPUS_PAYLOAD_TYPE ? data.length < 12 : data.length !== PACKET_BYTES || type !== 0)
      return;
    firstPackets.get(from.port)?.(absoluteNow());
    counts.received++;
    if (!trackGaps) return;
    const now = performance.now();
    const last = lastArrival.get(from.port);
    lastArrival.set(from.port, now);
    if (last === undefined) return;
    const gap = now - last;
    counts.gaps++;
    if (gap > LATE_GAP_MS) counts.lateGaps++;
    if (gap > counts.maxGapMs) counts.maxGapMs = gap;
  });
  return new Promise((resolve) => socket.bind(0, HOST, () => resolve(socket)));
}

function send(stream: Stream): boolean {
  if (stream.socket.getSendQueueCount() > MAX_QUEUED) return false;
  const body = stream.secure ? OPUS_FRAME : payload;
  const packet = Buffer.allocUnsafe(12 + body.length);
  packet[0] = 0x80;
  packet[1] = (stream.first ? 0x80 : 0) | (stream.secure ? OPUS_PAYLOAD_TYPE : 0);
  packet.writeUInt16BE(stream.sequence, 2);
  packet.writeUInt32BE(stream.timestamp, 4);
  packet.writeUInt32BE(stream.ssrc, 8);
  body.copy(packet, 12);
  stream.socket.send(
    stream.secure ? webrtc.protect(stream.port, packet) : packet,
    stream.port,
    HOST,
  );
  stream.first = false;
  stream.sequence = (stream.sequence + 1) & 0xffff;
  stream.timestamp =
    (stream.timestamp + (stream.secure ? OPUS_SAMPLES_PER_FRAME : PAYLOAD_BYTES)) >>> 0;
  counts.sent++;
  return true;
}

function stream(port: number, socket?: Socket, secure = false): Stream {
  let s = streams.get(port);
  if (!s) {
    const n = streams.size;
    s = {
      port,
      socket: socket ?? senders[n % senders.length]!,
      ssrc: (0x10000000 + n * 7919) >>> 0,
      sequence: (n * 31) & 0xffff,
      timestamp: n * 1000,
      first: true,
      secure,
    };
    streams.set(port, s);
  }
  return s;
}

/**
 * Waits for each leg's first RTP, after connecting it first when it is a WebRTC leg (whose
 * media then goes from the socket that did its ICE check). Times are absolute ms.
 */
async function connect(legs: readonly LegToConnect[]): Promise<LegArrival[]> {
  return Promise.all(
    legs.map(async (leg): Promise<LegArrival> => {
      const socket = (leg.via === 'sender' ? senders : sinks)[leg.index % senders.length]!;
      const arrived = new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => resolve(null), FIRST_PACKET_TIMEOUT_MS);
        firstPackets.set(leg.port, (at) => {
          clearTimeout(timer);
          firstPackets.delete(leg.port);
          resolve(at);
        });
      });
      let connectedAt: number | null = null;
      if (leg.webrtc) {
        streams.delete(leg.port);
        stream(leg.port, socket, true);
        await webrtc.connect({ port: leg.port, ...leg.webrtc }, socket);
        connectedAt = absoluteNow();
      }
      return { port: leg.port, connectedAt, firstPacketAt: await arrived };
    }),
  );
}

/** Legs the gateway closed: their ports may come back as other legs. */
function forget(ports: readonly number[]): void {
  for (const port of ports) {
    if (!streams.get(port)?.secure) continue;
    streams.delete(port);
    webrtc.forget(port);
  }
}

function start(targets: number[], mode: LoadMode): void {
  const current = ++run;
  const planned = targets.map((port) => stream(port));
  trackGaps = mode.kind === 'paced';
  lastArrival.clear();
  if (planned.length === 0) return;
  const started = performance.now();
  let next = 0;
  let owed = 0;
  const sendNext = (): boolean => {
    const ok = send(planned[next]!);
    if (ok) next = next + 1 === planned.length ? 0 : next + 1;
    return ok;
  };
  const turn = (): void => {
    if (current !== run) return;
    if (mode.kind === 'max') {
      for (let i = 0; i < MAX_BATCH && sendNext(); i++);
      setImmediate(turn);
      return;
    }
    if (mode.kind === 'paced') {
      for (const s of planned) if (!send(s)) counts.skipped++;
      owed++;
      setTimeout(turn, Math.max(0, started + owed * mode.everyMs - performance.now()));
      return;
    }
    const due = Math.floor(((performance.now() - started) * mode.packetsPerSecond) / 1000) - owed;
    const limit = (mode.packetsPerSecond * MAX_BEHIND_MS) / 1000;
    let sent = 0;
    for (; sent < Math.min(due, MAX_BATCH) && sendNext(); sent++);
    owed += sent;
    if (due - sent > limit) {
      counts.skipped += due - sent;
      owed += due - sent;
    }
    if (due - sent > 0) setImmediate(turn);
    else setTimeout(turn, 1);
  };
  turn();
}

const snapshot = (): LoadCounts => {
  const cpu = process.cpuUsage();
  return { ...counts, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
};

async function handle(request: LoadRequest): Promise<LoadReplies[LoadRequest['type']]> {
  switch (request.type) {
    case 'open':
      for (let i = 0; i < request.sockets; i++) {
        senders.push(await openSocket());
        sinks.push(await openSocket());
      }
      return {
        senderPorts: senders.map((s) => s.address().port),
        sinkPorts: sinks.map((s) => s.address().port),
        webrtc: webrtc.identity,
      };
    case 'connect':
      return connect(request.legs);
    case 'forget':
      forget(request.ports);
      return null;
    case 'start': {
      // Counted before the first packets go, which start() sends at once.
      const before = snapshot();
      start(request.targets, request.mode);
      return before;
    }
    case 'counts': {
      const taken = snapshot();
      // The longest gap is per window: from one count to the next.
      counts.maxGapMs = 0;
      return taken;
    }
    case 'stop':
      run++;
      return snapshot();
  }
}

process.on('message', (message: { id: number; request: LoadRequest }) => {
  void handle(message.request).then((reply) => process.send!({ id: message.id, reply }));
});
process.on('disconnect', () => process.exit(0));
