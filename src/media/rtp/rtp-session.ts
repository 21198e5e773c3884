import type { RemoteInfo, Socket } from 'node:dgram';
import { systemScheduler, type Scheduler, type TimerHandle } from '../../core/scheduler.js';
import { readThroughReader } from '../net/datagram-reader.js';
import { ntpFromUnixMs, ntpMiddle } from './ntp-time.js';
import { closeSocket, type PairSource } from './port-range.js';
import { ReceiveStatistics, type ReceptionReport } from './receive-statistics.js';
import {
  cnameChunk,
  parseRtcpCompound,
  serializeRtcpCompound,
  type RtcpPacket,
} from './rtcp-packet.js';
import { parseRtpPacket, serializeRtpPacket, type RtpPacket } from './rtp-packet.js';
import { cryptoRandomUint32, RtpSendStream, type RandomUint32 } from './send-stream.js';

export interface MediaAddress {
  address: string;
  port: number;
}

export interface RtpSessionOptions {
  allocator: PairSource;
  /** Timestamp units per second of the media sent: 8000 for PCMU and PCMA. */
  clockRate: number;
  /** The CNAME in every SDES (RFC 3550 6.5.1). */
  cname: string;
  scheduler?: Scheduler;
  /** Mean time between RTCP reports; each interval is randomised over [0.5, 1.5] of it. */
  rtcpIntervalMs?: number;
  /** Silence on RTP for this long raises onMediaTimeout; 0 turns it off. */
  mediaTimeoutMs?: number;
  /** Send to where the peer's RTP comes from rather than where SDP says (symmetric RTP). */
  latching?: boolean;
  random?: RandomUint32;
  /**
   * A transport under RTP that secures it and carries RTCP on the RTP port (WebRTC): it
   * takes every datagram of the RTP port, hands up what it unprotected, and says where media
   * may go; the odd port is left unread. Latching is then off: the transport chooses.
   */
  secure?: SecureTransport;
  /**
   * SRTP on the session's own ports (SDES-keyed legs): each datagram is unprotected as it
   * arrives and each packet protected as it leaves; null drops it. Latching is as for RTP.
   */
  protection?: PacketProtection;
}

/** What turns RTP into SRTP and back for a session that keeps its own ports. */
export interface PacketProtection {
  unprotectRtp(packet: Buffer): Buffer | null;
  unprotectRtcp(packet: Buffer): Buffer | null;
  protectRtp(packet: Buffer): Buffer | null;
  protectRtcp(packet: Buffer): Buffer | null;
}

/** What a secure transport (WebRTC's ICE, DTLS-SRTP and rtcp-mux) offers an RTP session. */
export interface SecureTransport {
  attach(links: {
    send(datagram: Buffer, to: MediaAddress): void;
    rtp(packet: Buffer, from: MediaAddress): void;
    rtcp(packet: Buffer, from: MediaAddress): void;
  }): void;
  receive(datagram: Buffer, from: MediaAddress): void;
  /** Where media may go now; undefined while it may not. */
  readonly destination: MediaAddress | undefined;
  protectRtp(packet: Buffer): Buffer;
  protectRtcp(packet: Buffer): Buffer;
  close(): void;
}

export interface RtpSendOptions {
  payloadType: number;
  /** Samples the payload covers, by which the timestamp advances after it. */
  samples: number;
  marker?: boolean;
  /** This packet's timestamp, when it is not the running one (an RFC 4733 event's start). */
  timestamp?: number;
}

/** What a session reports upward; a throwing listener does not stop the session. */
export interface RtpSessionListener {
  onPacket?(packet: RtpPacket, from: MediaAddress): void;
  onRtcp?(packets: RtcpPacket[], from: MediaAddress): void;
  onLatched?(rtp: MediaAddress): void;
  onMediaTimeout?(silentForMs: number): void;
  onError?(error: Error): void;
}

export interface RtpSessionCounters {
  /** Datagrams on the RTP port that did not parse as RTP. */
  malformed: number;
  /** RTP from somewhere other than the latched address. */
  foreign: number;
  rtcpMalformed: number;
}

const DEFAULT_RTCP_INTERVAL_MS = 5000;
const MAX_REPORT_BLOCKS = 31;

/**
 * One RTP session: an even port and the odd one above it for RTCP, one source sent, the
 * sources received tracked per SSRC, RTCP reports on a timer, and a media timeout.
 */
export class RtpSession {
  readonly sender: RtpSendStream;
  readonly counters: RtpSessionCounters = { malformed: 0, foreign: 0, rtcpMalformed: 0 };
  private readonly sources = new Map<number, ReceiveStatistics>();
  private readonly scheduler: Scheduler;
  private readonly random: RandomUint32;
  private remoteRtp: MediaAddress | undefined;
  private remoteRtcp: MediaAddress | undefined;
  private latched: MediaAddress | undefined;
  private lastRtpAt: number;
  private rtcpTimer: TimerHandle | undefined;
  private timeoutTimer: TimerHandle | undefined;
  private timedOut = false;
  private closed = false;
  private sentSinceReport = false;
  private readonly reportsAboutUs = new Map<number, ReceptionReport>();
  private readonly release: (() => void) | null;
  private secure: SecureTransport | null;
  /** Where the RTP port's datagrams go: RTP itself, or the secure transport. */
  private take: (data: Buffer, from: MediaAddress) => void;
  /** Datagrams whose handling threw (a defect, reported once per session). */
  private datagramFailures = 0;

  private constructor(
    private readonly rtpSocket: Socket,
    private readonly rtcpSocket: Socket,
    readonly port: number,
    private readonly options: RtpSessionOptions,
    private readonly listener: RtpSessionListener,
  ) {
    this.scheduler = options.scheduler ?? systemScheduler;
    this.random = options.random ?? cryptoRandomUint32;
    this.sender = new RtpSendStream({ clockRate: options.clockRate, random: this.random });
    this.lastRtpAt = this.scheduler.now();
    this.secure = options.secure ?? null;
    const secure = this.secure;
    if (secure) {
      secure.attach({
        send: (datagram, to) => rtpSocket.send(datagram, to.port, to.address),
        rtp: (packet, from) => this.receiveRtp(packet, from),
        rtcp: (packet, from) => this.receiveRtcp(packet, from),
      });
      this.take = (data, from) => secure.receive(data, from);
    } else if (options.protection) {
      const protection = options.protection;
      this.take = (data, from) => this.receiveProtected(protection, data, from);
      rtcpSocket.on('message', (data, from) => {
        const plain = protection.unprotectRtcp(data);
        if (plain !== null) this.receiveRtcp(plain, from);
      });
    } else {
      this.take = (data, from) => this.receiveRtp(data, from);
      rtcpSocket.on('message', (data, from) => this.receiveRtcp(data, from));
    }
    // RTP comes through the thread's datagram reader when the socket allows, else from Node.
    // A datagram that throws is this leg's fault alone: reported once, it reaches neither the
    // thread's other legs (the reader's loop) nor the thread itself.
    const take = (data: Buffer, from: MediaAddress): void => {
      try {
        this.take(data, from);
      } catch (error) {
        if (this.datagramFailures++ === 0) this.report('onError', error as Error);
      }
    };
    this.release = readThroughReader(rtpSocket, (data, port, address) =>
      take(data, { address, port }),
    );
    if (!this.release) rtpSocket.on('message', (data, from) => take(data, from));
    rtpSocket.on('error', (error) => this.report('onError', error));
    rtcpSocket.on('error', (error) => this.report('onError', error));
    this.scheduleRtcp();
    this.armMediaTimeout();
  }

  static async open(
    options: RtpSessionOptions,
    listener: RtpSessionListener = {},
  ): Promise<RtpSession> {
    if (options.mediaTimeoutMs !== undefined && !(options.mediaTimeoutMs >= 0))
      throw new RangeError(
        `Expected a non-negative number for mediaTimeoutMs but received ${options.mediaTimeoutMs}`,
      );
    if (options.rtcpIntervalMs !== undefined && !(options.rtcpIntervalMs > 0))
      throw new RangeError(
        `Expected a positive number for rtcpIntervalMs but received ${options.rtcpIntervalMs}`,
      );
    const pair = await options.allocator.bindPair();
    const session = new RtpSession(pair.rtp, pair.rtcp, pair.port, options, listener);
    session.early = pair.early ?? [];
    return session;
  }

  private early: [Buffer, RemoteInfo][] = [];

  /** Hands on the packets that reached the port before the session had it (once). */
  replayEarly(): void {
    const early = this.early;
    this.early = [];
    for (const [data, from] of early) this.take(data, from);
  }

  get rtcpPort(): number {
    return this.port + 1;
  }

  /** Where RTP goes now: the latched source once there is one, the SDP address before. */
  get destination(): MediaAddress | undefined {
    return this.secure ? this.secure.destination : (this.latched ?? this.remoteRtp);
  }

  get rtcpDestination(): MediaAddress | undefined {
    return this.secure ? this.secure.destination : this.remoteRtcp;
  }

  /**
   * The clock rate of the media from now on (a codec with another clock was negotiated): for
   * sender reports, and for the jitter of sources first heard after it.
   */
  setClockRate(clockRate: number): void {
    this.sender.setClockRate(clockRate);
  }

  /** The remote from SDP; RTCP defaults to the next port (RFC 3550 11). Undoes any latch. */
  setRemote(
    rtp: MediaAddress,
    rtcp: MediaAddress = { address: rtp.address, port: rtp.port + 1 },
  ): void {
    this.remoteRtp = { ...rtp };
    this.remoteRtcp = { ...rtcp };
    this.latched = undefined;
  }

  /**
   * Goes on without the secure transport it was opened with, the answer having come from a
   * peer of plain RTP (a desk phone rung beside a browser, offered the same port): RTP and
   * RTCP are taken as they come from here, on their own ports, and the transport is closed.
   */
  dropSecure(): void {
    if (!this.secure || this.closed) return;
    this.secure.close();
    this.secure = null;
    this.take = (data, from) => this.receiveRtp(data, from);
    this.rtcpSocket.on('message', (data, from) => this.receiveRtcp(data, from));
  }

  send(payload: Uint8Array, options: RtpSendOptions): void {
    if (this.closed) throw new Error('RTP session is closed');
    const to = this.destination;
    if (!to) throw new Error('RTP session has no remote address to send to');
    const now = this.scheduler.now();
    const position = this.sender.advance(options.samples, payload.length, now, options.timestamp);
    const data = serializeRtpPacket({
      marker: options.marker ?? false,
      payloadType: options.payloadType,
      ...position,
      ssrc: this.sender.ssrc,
      payload,
    });
    this.sentSinceReport = true;
    const wire = this.secure
      ? this.secure.protectRtp(data)
      : this.options.protection
        ? this.options.protection.protectRtp(data)
        : data;
    if (wire !== null) this.rtpSocket.send(wire, to.port, to.address);
  }

  /** Receive statistics per remote SSRC. */
  get receivers(): ReadonlyMap<number, ReceiveStatistics> {
    return this.sources;
  }

  /** The latest report block each peer sent about our stream, by reporter SSRC. */
  get remoteReports(): ReadonlyMap<number, ReceptionReport> {
    return this.reportsAboutUs;
  }

  /** Sends an SR (or an RR when we have sent nothing since the last one) with SDES now. */
  sendReport(extra: RtcpPacket[] = []): Promise<void> {
    const to = this.rtcpDestination;
    if (!to || this.closed) return Promise.resolve();
    const report = this.buildReport(extra);
    // RFC 5761 4: with rtcp-mux, RTCP goes on the RTP port, SRTCP-protected (RFC 3711 3.4).
    const data = this.secure
      ? this.secure.protectRtcp(report)
      : this.options.protection
        ? this.options.protection.protectRtcp(report)
        : report;
    if (data === null) return Promise.resolve();
    const socket = this.secure ? this.rtpSocket : this.rtcpSocket;
    return new Promise((resolve) => socket.send(data, to.port, to.address, () => resolve()));
  }

  /** Sends a BYE with a last report, stops the timers and closes both sockets. */
  async close(reason?: string): Promise<void> {
    if (this.closed) return;
    this.rtcpTimer?.cancel();
    this.timeoutTimer?.cancel();
    try {
      await this.sendReport([
        { type: 'bye', ssrcs: [this.sender.ssrc], ...(reason ? { reason } : {}) },
      ]);
    } catch (error) {
      this.report('onError', error as Error);
    }
    this.closed = true;
    this.secure?.close();
    this.release?.();
    await Promise.all([closeSocket(this.rtpSocket), closeSocket(this.rtcpSocket)]);
  }

  private buildReport(extra: RtcpPacket[]): Buffer {
    const now = this.scheduler.now();
    const reports = [...this.sources.values()]
      .filter((source) => source.valid)
      .slice(0, MAX_REPORT_BLOCKS)
      .map((source) => source.report(now));
    const ssrc = this.sender.ssrc;
    const first: RtcpPacket = this.sentSinceReport
      ? {
          type: 'sr',
          ssrc,
          ntp: ntpFromUnixMs(now),
          rtpTimestamp: this.sender.timestampAt(now),
          packetCount: this.sender.packetCount,
          octetCount: this.sender.octetCount,
          reports,
        }
      : { type: 'rr', ssrc, reports };
    this.sentSinceReport = false;
    return serializeRtcpCompound([
      first,
      { type: 'sdes', chunks: [cnameChunk(ssrc, this.options.cname)] },
      ...extra,
    ]);
  }

  /**
   * An SRTP leg's RTP port. RFC 5761 4: a peer that multiplexes RTCP there sends a second
   * byte of 192-223 (a payload type of 64-95 once the marker bit is masked).
   */
  private receiveProtected(protection: PacketProtection, data: Buffer, from: MediaAddress): void {
    const type = data.length > 1 ? data[1]! & 0x7f : 0;
    if (type >= 64 && type <= 95) {
      const plain = protection.unprotectRtcp(data);
      if (plain !== null) this.receiveRtcp(plain, from);
      return;
    }
    const plain = protection.unprotectRtp(data);
    if (plain !== null) this.receiveRtp(plain, from);
  }

  private receiveRtp(data: Buffer, info: MediaAddress): void {
    if (this.closed) return;
    let packet: RtpPacket;
    try {
      packet = parseRtpPacket(data);
    } catch {
      this.counters.malformed++;
      return;
    }
    const from = { address: info.address, port: info.port };
    if (this.latched && !sameAddress(this.latched, from)) {
      this.counters.foreign++;
      return;
    }
    const now = this.scheduler.now();
    let source = this.sources.get(packet.ssrc);
    if (!source) {
      source = new ReceiveStatistics(packet.ssrc, this.sender.clockRate);
      this.sources.set(packet.ssrc, source);
    }
    const verdict = source.update(packet.sequenceNumber, packet.timestamp, now);
    if (verdict === 'bad-jump') return;
    this.lastRtpAt = now;
    if (this.timedOut) {
      this.timedOut = false;
      this.armMediaTimeout();
    }
    // RFC 4961 / NAT: once a source is valid (A.1 probation passed), answer where it comes from.
    if (!this.latched && (this.options.latching ?? this.secure === null) && source.valid)
      this.latch(from);
    this.report('onPacket', packet, from);
  }

  private latch(from: MediaAddress): void {
    this.latched = from;
    const sdp = this.remoteRtp;
    // Symmetric RTCP follows the latched address unless RTCP has come from somewhere already.
    if (!sdp || !sameAddress(sdp, from))
      this.remoteRtcp = { address: from.address, port: from.port + 1 };
    this.report('onLatched', from);
  }

  private receiveRtcp(data: Buffer, info: MediaAddress): void {
    if (this.closed) return;
    let packets: RtcpPacket[];
    try {
      packets = parseRtcpCompound(data);
    } catch {
      this.counters.rtcpMalformed++;
      return;
    }
    const from = { address: info.address, port: info.port };
    if (this.latched && from.address === this.latched.address) this.remoteRtcp = from;
    const now = this.scheduler.now();
    for (const packet of packets) {
      if (packet.type === 'sr')
        this.sources.get(packet.ssrc)?.senderReportReceived(ntpMiddle(packet.ntp), now);
      if (packet.type === 'sr' || packet.type === 'rr')
        for (const block of packet.reports)
          if (block.ssrc === this.sender.ssrc) this.reportsAboutUs.set(packet.ssrc, block);
    }
    this.report('onRtcp', packets, from);
  }

  private scheduleRtcp(): void {
    const mean = this.options.rtcpIntervalMs ?? DEFAULT_RTCP_INTERVAL_MS;
    // RFC 3550 6.3.1: the interval is randomised over [0.5, 1.5] of its mean.
    const interval = mean * (0.5 + this.random() / 2 ** 32);
    this.rtcpTimer = this.scheduler.after(interval, () => {
      if (this.closed) return;
      this.sendReport().catch((error: Error) => this.report('onError', error));
      this.scheduleRtcp();
    });
  }

  private armMediaTimeout(): void {
    const timeout = this.options.mediaTimeoutMs ?? 0;
    if (timeout <= 0) return;
    const due = this.lastRtpAt + timeout - this.scheduler.now();
    this.timeoutTimer = this.scheduler.after(Math.max(0, due), () => {
      if (this.closed) return;
      const silent = this.scheduler.now() - this.lastRtpAt;
      if (silent < timeout) return this.armMediaTimeout();
      this.timedOut = true;
      this.report('onMediaTimeout', silent);
    });
  }

  private report<K extends keyof RtpSessionListener>(
    event: K,
    ...args: Parameters<NonNullable<RtpSessionListener[K]>>
  ): void {
    try {
      (this.listener[event] as ((...a: typeof args) => void) | undefined)?.(...args);
    } catch (error) {
      if (event !== 'onError') this.report('onError', error as Error);
    }
  }
}

const sameAddress = (a: MediaAddress, b: MediaAddress): boolean =>
  a.address === b.address && a.port === b.port;
