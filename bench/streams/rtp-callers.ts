import { createSocket, type Socket } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { muLawEncode } from '../../src/media/codec/g711.js';

const FRAME_MS = 20;
const FRAME_BYTES = 160;
const HEADER_BYTES = 12;
/** Frames whose send time is remembered per caller: 5 s, far more than any round trip. */
const RING = 256;
/** 5 s of ticks: how often a caller's wire is asked to keep its leg alive. */
const KEEP_ALIVE_TICKS = 250;
/** Bytes at the start of a payload carrying its frame number, a nibble each (0x20-0x2F). */
const NUMBER_BYTES = 5;

/** 400 Hz at a third of full scale: whole periods in 20 ms, so every frame is the same. */
const TONE = (() => {
  const pcm = new Int16Array(FRAME_BYTES);
  for (let i = 0; i < pcm.length; i++)
    pcm[i] = Math.round(10_000 * Math.sin((2 * Math.PI * i) / 20));
  return muLawEncode(pcm);
})();
const SILENCE = Buffer.alloc(FRAME_BYTES, 0xff);

/**
 * Writes frame number `n` into a payload in bytes that survive mu-law decoding and encoding
 * again (0x7F is the only code that does not: it comes back as 0xFF).
 */
export function numberFrame(payload: Buffer, n: number): void {
  for (let i = 0; i < NUMBER_BYTES; i++) payload[i] = 0x20 | ((n >>> (4 * i)) & 0x0f);
}

/** The frame number a payload carries, or -1 for silence and -2 for other audio. */
export function frameNumber(payload: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < NUMBER_BYTES; i++) {
    const byte = payload[i] ?? 0;
    if ((byte & 0xf0) !== 0x20) return payload.every((b) => b === 0xff) ? -1 : -2;
    n |= (byte & 0x0f) << (4 * i);
  }
  return n;
}

/** frameNumber() of audio that carries no number (Opus: the gateway transcodes it). */
export const UNNUMBERED = -3;

/**
 * How a caller's leg carries its frames: the payload of each, what goes on the wire for a
 * packet, and what came back. Plain PCMU numbers its frames in the audio bytes; a WebRTC leg
 * (webrtc-caller.ts) protects them with SRTP and sends Opus.
 */
export interface CallerWire {
  readonly payloadType: number;
  /** RTP timestamp units per 20 ms frame. */
  readonly samplesPerFrame: number;
  /** False while the leg cannot send media yet (WebRTC before DTLS gave the keys). */
  readonly ready: boolean;
  /** The payload of numbered frame `n`, or of silence for -1. */
  payload(n: number): Uint8Array;
  /** The datagram that carries an RTP packet. */
  outbound(packet: Buffer): Buffer;
  /** A received datagram's RTP payload in this leg's payload type, or null. */
  inbound(data: Buffer): Buffer | null;
  /** A payload's frame number, -1 for silence, -2 for altered audio, UNNUMBERED for audio. */
  frameNumber(payload: Uint8Array): number;
  /** Called every 5 s: a WebRTC leg's consent check (RFC 7675). */
  keepAlive?(): void;
}

/** Makes a caller's wire, given how to send its own datagrams to a port of the gateway. */
export type WireFactory = (send: (datagram: Buffer, port: number) => void) => CallerWire;

/** Plain RTP with PCMU: the frame number in the first bytes of the tone. */
export const PCMU_WIRE: CallerWire = {
  payloadType: 0,
  samplesPerFrame: FRAME_BYTES,
  ready: true,
  payload(n) {
    if (n < 0) return SILENCE;
    const payload = Buffer.from(TONE);
    numberFrame(payload, n);
    return payload;
  },
  outbound: (packet) => packet,
  inbound(data) {
    if (data.length < HEADER_BYTES || (data[1]! & 0x7f) !== 0) return null;
    let offset = HEADER_BYTES + (data[0]! & 0x0f) * 4;
    if (data[0]! & 0x10) offset += 4 + data.readUInt16BE(offset + 2) * 4;
    return data.subarray(offset);
  },
  frameNumber,
};

/** What the callers sent and got back since the last take(). */
export interface CallerCounters {
  packetsSent: number;
  /** Numbered audio frames sent (the rest were silence). */
  audioFramesSent: number;
  packetsReceived: number;
  /** Numbered frames that came back, each counted once. */
  echoedFrames: number;
  duplicateEchoes: number;
  /** Frames skipped in what came back, per caller. */
  echoGaps: number;
  /** Audio back that was neither silence nor a numbered frame: reframed or altered. */
  alteredFrames: number;
  /** Caller RTP sockets that failed to send. */
  sendErrors: number;
}

const zero = (): CallerCounters => ({
  packetsSent: 0,
  audioFramesSent: 0,
  packetsReceived: 0,
  echoedFrames: 0,
  duplicateEchoes: 0,
  echoGaps: 0,
  alteredFrames: 0,
  sendErrors: 0,
});

/** One caller's RTP: its socket, the stream it sends, and what its echo has said so far. */
export class RtpCaller {
  remote: { host: string; port: number } | null = null;
  readonly wire: CallerWire;
  private sequence = Math.floor(Math.random() * 0xffff);
  private timestamp = Math.floor(Math.random() * 0xffffffff);
  private readonly ssrc = Math.floor(Math.random() * 0xffffffff);
  private marker = true;
  private frame = 0;
  private lastEchoed = 0;
  private readonly sentAt = new Float64Array(RING);
  private readonly sentNumber = new Int32Array(RING).fill(-1);

  private constructor(
    private readonly socket: Socket,
    readonly port: number,
    private readonly media: CallerMedia,
    wire: WireFactory,
  ) {
    this.wire = wire((datagram, port) => this.sendRaw(datagram, port));
    socket.on('message', (data) => this.receive(data));
    socket.on('error', () => media.counters.sendErrors++);
  }

  static async open(port: number, media: CallerMedia, wire: WireFactory): Promise<RtpCaller> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, media.host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return new RtpCaller(socket, port, media, wire);
  }

  /** Sends one 20 ms frame: numbered audio, or silence. */
  send(audio: boolean): void {
    const remote = this.remote;
    if (!remote || !this.wire.ready) return;
    const counters = this.media.counters;
    let n = -1;
    if (audio) {
      n = ++this.frame;
      this.sentNumber[n % RING] = n;
      this.sentAt[n % RING] = performance.now();
      counters.audioFramesSent++;
    }
    const payload = this.wire.payload(n);
    const packet = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
    packet[0] = 0x80;
    packet[1] = (this.marker ? 0x80 : 0x00) | this.wire.payloadType;
    this.marker = false;
    this.sequence = (this.sequence + 1) & 0xffff;
    this.timestamp = (this.timestamp + this.wire.samplesPerFrame) >>> 0;
    packet.writeUInt16BE(this.sequence, 2);
    packet.writeUInt32BE(this.timestamp, 4);
    packet.writeUInt32BE(this.ssrc, 8);
    packet.set(payload, HEADER_BYTES);
    counters.packetsSent++;
    this.socket.send(this.wire.outbound(packet), remote.port, remote.host);
  }

  /** Sends a datagram of the wire's own (an ICE check, a DTLS record) to the gateway's port. */
  sendRaw(datagram: Buffer, port: number): void {
    this.socket.send(datagram, port, this.remote?.host ?? this.media.host);
  }

  close(): void {
    this.socket.close();
  }

  private receive(data: Buffer): void {
    const now = performance.now();
    const counters = this.media.counters;
    const payload = this.wire.inbound(data);
    if (payload === null) return;
    counters.packetsReceived++;
    const n = this.wire.frameNumber(payload);
    if (n === -1) return;
    if (n === -2) {
      counters.alteredFrames++;
      return;
    }
    if (n === UNNUMBERED) {
      // Audio that cannot carry a number (Opus): counted, with neither gaps nor a round trip.
      counters.echoedFrames++;
      return;
    }
    if (n <= this.lastEchoed) {
      counters.duplicateEchoes++;
      return;
    }
    if (this.lastEchoed > 0 && n > this.lastEchoed + 1)
      counters.echoGaps += n - this.lastEchoed - 1;
    this.lastEchoed = n;
    counters.echoedFrames++;
    if (this.sentNumber[n % RING] === n) this.media.roundTripMs.push(now - this.sentAt[n % RING]!);
  }
}

/**
 * Every caller's RTP, sent by one clock: a timer that fires every 20 ms and sends a frame for
 * every caller, so that the generator costs one timer however many calls there are. How late
 * each tick fired is kept: when it is late, the benchmark, not the gateway, is behind.
 */
export class CallerMedia {
  counters = zero();
  roundTripMs: number[] = [];
  /** What callers send: silence while calls are set up and torn down, numbered audio between. */
  mode: 'off' | 'silence' | 'audio' = 'off';
  private readonly callers = new Set<RtpCaller>();
  private tickLateMs: number[] = [];
  private skippedTicks = 0;
  private timer: NodeJS.Timeout | null = null;
  private origin = 0;
  private tick = 0;
  private nextPort: number;

  constructor(
    private readonly firstPort: number,
    /** The address the callers' RTP sockets bind, as their SDP offers say. */
    readonly host = '127.0.0.1',
  ) {
    this.nextPort = firstPort;
  }

  /** A caller on the next free even port of `host` from `firstPort` up (plain PCMU by default). */
  async add(wire: WireFactory = () => PCMU_WIRE): Promise<RtpCaller> {
    for (let tries = 0; tries < 1000; tries++) {
      const port = this.nextPort;
      this.nextPort =
        this.nextPort + 2 > this.firstPort + 9998 ? this.firstPort : this.nextPort + 2;
      try {
        const caller = await RtpCaller.open(port, this, wire);
        this.callers.add(caller);
        return caller;
      } catch {
        // in use: the next one
      }
    }
    throw new Error(`no free UDP port for a caller from ${this.firstPort} up`);
  }

  remove(caller: RtpCaller): void {
    this.callers.delete(caller);
    caller.close();
  }

  start(): void {
    if (this.timer) return;
    this.origin = performance.now();
    this.tick = 0;
    this.schedule();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** What was sent and received since the last take, and how the clock kept time. */
  take(): {
    counters: CallerCounters;
    roundTripMs: number[];
    tickLateMs: number[];
    skippedTicks: number;
  } {
    const taken = {
      counters: this.counters,
      roundTripMs: this.roundTripMs,
      tickLateMs: this.tickLateMs,
      skippedTicks: this.skippedTicks,
    };
    this.counters = zero();
    this.roundTripMs = [];
    this.tickLateMs = [];
    this.skippedTicks = 0;
    return taken;
  }

  private schedule(): void {
    const due = this.origin + this.tick * FRAME_MS;
    this.timer = setTimeout(() => this.fire(due), Math.max(0, due - performance.now()));
  }

  private fire(due: number): void {
    const now = performance.now();
    // Timers round to whole ms and can fire a little early: that counts as on time.
    this.tickLateMs.push(Math.max(0, now - due));
    if (this.mode !== 'off') {
      const audio = this.mode === 'audio';
      for (const caller of this.callers) caller.send(audio);
    }
    this.tick++;
    if (this.tick % KEEP_ALIVE_TICKS === 0)
      for (const caller of this.callers) caller.wire.keepAlive?.();
    // More than a whole frame behind: those ticks are skipped, not sent in a burst.
    const behind = Math.floor((performance.now() - this.origin) / FRAME_MS) - this.tick;
    if (behind > 0) {
      this.skippedTicks += behind;
      this.tick += behind;
    }
    this.schedule();
  }
}
