import type { PlayoutMode } from '../playout/playout-queue.js';
import type { PlayoutSource } from '../playout/playout-source.js';
import type { FrameClock } from '../playout/frame-clock.js';
import { DtmfReceiver } from '../dtmf/dtmf-receiver.js';
import type { DtmfDigit } from '../dtmf/dtmf-digit.js';
import type { RtpPacket } from '../rtp/rtp-packet.js';
import { RtpSession } from '../rtp/rtp-session.js';
import { WebrtcTransport, type WebrtcFailure } from '../webrtc/webrtc-transport.js';
import { SdesProtection } from '../srtp/sdes-protection.js';
import { systemScheduler, type Scheduler, type TimerHandle } from '../../core/scheduler.js';
import { mix } from '../codec/pcm-frame.js';
import { clockRateOf, payloadCodec, type AudioFormat, type CodecSettings } from './audio-format.js';
import { InboundPath } from './inbound-path.js';
import { OutboundPath, type DigitOptions, type OutboundItem } from './outbound-path.js';
import { SendPacer } from './send-pacer.js';
import { LegSender } from './leg-sender.js';
import {
  checkSessionSpec,
  type AudioTap,
  type MediaDirection,
  type MediaEnvironment,
  type MediaSessionListener,
  type MediaSessionSpec,
  type MediaSessionStats,
  type MediaSessionUpdate,
  type PacketTap,
  type ReceivedDtmf,
  type TelephoneEventFormat,
} from './session-spec.js';

/**
 * One call leg's media inside a worker: an RTP session on its port pair, the inbound path
 * (jitter buffer, decode, concealment, noise suppression, DTMF) feeding taps, and the
 * outbound path (playout, digits, encode) sending on the worker's one 20 ms clock.
 */
export class MediaSession {
  private callRate: AudioFormat['rate'];
  private inbound: InboundPath;
  private outbound: OutboundPath;
  /**
   * Whether the call's rate is fixed: once offer/answer has settled a codec, or anything
   * plays, listens or is bridged. Until then a negotiated format at another rate (Opus at
   * 16 kHz on a leg opened for PCMU) moves the whole session to it.
   */
  private rateSettled = false;
  private readonly taps = new Set<AudioTap>();
  private readonly outboundTaps = new Set<AudioTap>();
  private readonly tickTaps = new Set<() => void>();
  private readonly digitTaps = new Set<(digit: ReceivedDtmf) => void>();
  private readonly packetTaps = new Set<PacketTap>();
  /** The worker's one 20 ms clock (a test's fake one in tests): ticks this leg, paces its frames. */
  private readonly clock: FrameClock;
  private readonly pacer = new SendPacer();
  /** Timers of the worker (a test's fake ones in tests): a frame catching up. */
  private readonly timers: Scheduler;
  /** A frame behind its time waiting out half a frame since the last (see sendNow). */
  private catchUp: TimerHandle | null = null;
  /** How many holders keep every frame on the clock's ticks (see paceByTicks). */
  private tickPaced = 0;
  /** Whether a tick in a talkspurt has something to send rather than audio to wait for. */
  private readonly playoutReady = (): boolean =>
    this.outbound.sendingDigits || this.outbound.playout.ready;
  private readonly playing = new Set<{
    stopped: boolean;
    source: PlayoutSource;
    tag: string | undefined;
  }>();
  private digits: DtmfReceiver;
  private readonly sender: LegSender;
  /** The worker's own coding settings, for every send codec the leg makes. */
  private readonly codecSettings: CodecSettings;
  private telephoneEvent: TelephoneEventFormat | null;
  private direction: MediaDirection;
  private received = 0;
  private formats: AudioFormat[];
  private relayTarget: MediaSession | null = null;
  private relayedInto = 0;
  /**
   * The last frame a leg relaying into this one heard (decoded while this one has outbound
   * taps, or always from Opus): what the relayed packets say, for the taps while this leg has
   * nothing of its own, and mixed into what it plays when it has.
   */
  private relayedFrame: Int16Array | null = null;
  private stopTicking: () => void;
  private closed = false;

  private constructor(
    private readonly rtp: RtpSession,
    private transport: WebrtcTransport | null,
    private readonly protection: SdesProtection | null,
    private readonly spec: MediaSessionSpec,
    env: MediaEnvironment,
    private readonly listener: MediaSessionListener,
  ) {
    const rate = spec.formats[0]!.rate;
    this.callRate = rate;
    this.clock = env.clock;
    this.timers = env.scheduler ?? systemScheduler;
    this.codecSettings = env.codecs ?? {};
    this.formats = [...spec.formats];
    this.telephoneEvent = spec.telephoneEvent ?? null;
    this.direction = spec.direction ?? 'sendrecv';
    this.digits = new DtmfReceiver(this.telephoneEvent?.rate ?? 8000);
    this.inbound = this.inboundPath(spec, rate);
    this.outbound = new OutboundPath({
      rate,
      telephoneEventRate: this.telephoneEvent?.rate ?? null,
    });
    this.sender = new LegSender(rtp, {
      codec: payloadCodec(spec.formats[0]!, rate, this.codecSettings),
      rate,
      silence: this.outbound.playout.silence,
    });
    if (spec.remote) rtp.setRemote(spec.remote);
    this.stopTicking = this.clock.add((at) => this.tick(at));
  }

  static async open(
    spec: MediaSessionSpec,
    env: MediaEnvironment,
    listener: MediaSessionListener = {},
  ): Promise<MediaSession> {
    // Checked before a port is taken, so a bad spec costs nothing.
    checkSessionSpec(spec);
    let session: MediaSession | undefined;
    // Bad credentials, or a worker without the certificate, throw before a port is taken.
    const transport = spec.webrtc
      ? new WebrtcTransport({
          spec: spec.webrtc,
          environment: env.webrtc,
          scheduler: env.scheduler ?? systemScheduler,
          onFailed: (failure) => session?.transportFailed(failure),
        })
      : null;
    const protection = spec.sdes ? new SdesProtection(spec.sdes, env.srtpTally) : null;
    const rtp = await RtpSession.open(
      {
        allocator: env.allocator,
        clockRate: clockRateOf(spec.formats[0]!),
        cname: env.cname,
        scheduler: env.scheduler,
        mediaTimeoutMs: spec.mediaTimeoutMs ?? 0,
        ...(transport && { secure: transport }),
        ...(protection && { protection }),
      },
      {
        onPacket: (packet) => session?.receive(packet),
        onLatched: (from) => session?.report('onLatched', from),
        onMediaTimeout: (ms) => session?.timedOut(ms),
        onRtcp: (packets) => session?.sender.reportsReceived(packets),
        onError: (error) => session?.report('onError', error),
      },
    );
    try {
      session = new MediaSession(rtp, transport, protection, spec, env, listener);
    } catch (error) {
      await rtp.close();
      throw error;
    }
    rtp.replayEarly();
    return session;
  }

  /** The call's rate: what every frame heard and played is at. */
  get rate(): AudioFormat['rate'] {
    return this.callRate;
  }

  get port(): number {
    return this.rtp.port;
  }

  get rtcpPort(): number {
    return this.rtp.rtcpPort;
  }

  update(changes: MediaSessionUpdate): void {
    if (changes.formats) {
      if (changes.formats.length === 0) throw new Error('Expected at least one audio format');
      const first = changes.formats[0]!;
      if (!this.rateSettled && first.rate !== this.callRate) this.moveRate(first.rate);
      this.rateSettled = true;
      const codec = payloadCodec(first, this.callRate, this.codecSettings);
      this.inbound.setFormats(changes.formats);
      this.sender.setCodec(codec);
      this.formats = [...changes.formats];
      this.rtp.setClockRate(codec.clockRate);
    }
    if (changes.telephoneEvent !== undefined) {
      // The events' durations count in their own clock: 48 kHz beside Opus, 8 kHz beside G.711.
      const rate = changes.telephoneEvent?.rate ?? 8000;
      if (rate !== (this.telephoneEvent?.rate ?? 8000)) this.digits = new DtmfReceiver(rate);
      this.telephoneEvent = changes.telephoneEvent;
      this.inbound.setInbandDetection(changes.telephoneEvent === null);
      this.outbound.setTelephoneEventRate(changes.telephoneEvent?.rate ?? null);
    }
    if (changes.remote) this.rtp.setRemote(changes.remote);
    if (changes.direction) this.direction = changes.direction;
    if (changes.webrtc) this.transport?.setPeer(changes.webrtc);
    else if (changes.webrtc === null && this.transport) {
      this.rtp.dropSecure();
      this.transport = null;
    }
    if (changes.sdes !== undefined) this.setSdesKeys(changes.sdes);
  }

  private setSdesKeys(keys: MediaSessionUpdate['sdes']): void {
    if (this.protection) this.protection.setKeys(keys ?? null);
    else if (keys) throw new Error('SDES keys for a session not opened for SDES-SRTP');
  }

  /**
   * Plays a source; resolves true when it played to its end, false when it was stopped. A tag
   * lets stopPlayback stop it alone.
   */
  play(source: PlayoutSource, mode: PlayoutMode = 'mix', tag?: string): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    this.rateSettled = true;
    if (mode === 'replace') for (const entry of this.playing) entry.stopped = true;
    const entry = { stopped: false, source, tag };
    this.playing.add(entry);
    return new Promise((resolve) =>
      this.outbound.playout.play(source, {
        mode,
        onDone: () => {
          this.playing.delete(entry);
          resolve(!entry.stopped);
        },
      }),
    );
  }

  /**
   * Plays a source its owner ends (a bidirectional stream's audio, which leaves once it reads
   * as ended): stopPlayback and a 'replace' leave it playing, mixed with what plays after.
   */
  playStanding(source: PlayoutSource): void {
    if (this.closed) return;
    this.rateSettled = true;
    this.outbound.playout.play(source, { standing: true });
  }

  /** Stops everything playing but standing sources, or only what was played with `tag`. */
  stopPlayback(tag?: string): void {
    if (tag === undefined) {
      for (const entry of this.playing) entry.stopped = true;
      this.outbound.playout.stop();
      return;
    }
    for (const entry of [...this.playing]) {
      if (entry.tag !== tag) continue;
      entry.stopped = true;
      this.outbound.playout.remove(entry.source);
    }
  }

  /** Sends a digit string; see OutboundPath.sendDigits. */
  sendDigits(text: string, options?: DigitOptions): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    this.rateSettled = true;
    return this.outbound.sendDigits(text, options);
  }

  /**
   * Forwards this leg's RTP audio to `target` as it arrives, undecoded (legs that share a
   * codec): the least latency and work. The target sends no audio of its own while relayed
   * into, unless something plays on it or it sends digits; then that audio takes the place of
   * the relayed packets, with what they say mixed into it when this leg relays Opus (it
   * decodes all along, so its decoder never resumes after a gap; G.711 relays decode only for
   * taps). Null stops relaying.
   */
  relayTo(target: MediaSession | null): void {
    if (target === this) throw new Error('Expected another session to relay to');
    this.rateSettled = true;
    if (this.relayTarget) this.relayTarget.relayedInto--;
    this.relayTarget = target;
    if (target) target.relayedInto++;
  }

  /** Hands every frame heard to `tap` until the returned function is called. */
  addTap(tap: AudioTap): () => void {
    this.rateSettled = true;
    this.taps.add(tap);
    return () => this.taps.delete(tap);
  }

  /**
   * Hands `tap` every frame this leg plays out, 20 ms at the call's rate, silence included
   * (while a digit is sent, or nothing plays), until the returned function is called.
   */
  addOutboundTap(tap: AudioTap): () => void {
    this.rateSettled = true;
    this.outboundTaps.add(tap);
    return () => this.outboundTaps.delete(tap);
  }

  /**
   * Calls `tap` on every 20 ms tick of the leg's clock, whether or not a frame goes then (in a
   * talkspurt the frames keep the audio's time, not the ticks'), until the returned function
   * is called.
   */
  addTickTap(tap: () => void): () => void {
    this.tickTaps.add(tap);
    return () => this.tickTaps.delete(tap);
  }

  /** Hands `tap` each packet's audio as it arrives, until the returned function is called. */
  addPacketTap(tap: PacketTap): () => void {
    this.rateSettled = true;
    this.packetTaps.add(tap);
    this.inbound.onDecoded = (pcm, packet) => {
      const arrivedAt = performance.now();
      for (const each of this.packetTaps) each(pcm, packet, arrivedAt);
    };
    return () => {
      this.packetTaps.delete(tap);
      if (this.packetTaps.size === 0) this.inbound.onDecoded = null;
    };
  }

  /**
   * Audio has just arrived for this leg (a stream's playAudio): once a whole frame of it is
   * queued, that frame goes now rather than at the next tick when the pacer allows (see
   * SendPacer): at once when it starts a talkspurt, else when its frame is due, and a frame
   * behind its time half a frame after the last.
   * `queuedFrames`: the whole frames of it now queued.
   */
  sendNow(queuedFrames: number): void {
    if (this.closed || this.tickPaced > 0) return;
    const now = this.clock.now();
    const wait = this.pacer.arrivalWait(now, queuedFrames);
    if (wait > 0) {
      if (wait !== Infinity && !this.catchUp) {
        this.catchUp = this.timers.after(wait, () => {
          this.catchUp = null;
          const at = this.clock.now();
          if (this.closed || !this.pacer.catchUpSends(at) || !this.outbound.playout.ready) return;
          this.sendFrame(at, this.clockTime(at));
        });
      }
      return;
    }
    if (!this.outbound.playout.ready) return;
    if (!this.pacer.talking) this.sender.marker = true;
    this.sendFrame(now, this.clockTime(now));
  }

  /**
   * Where this leg is in time by its clock: now, or, while the worker is behind its ticks (it
   * stood still, and the ticks it owes have not run yet), when the first of them was due. The
   * peer has had no frame since then, so a frame sent now is that tick's, and a talkspurt it
   * starts keeps time from there: the worker's own stall does not become the audio's delay.
   */
  private clockTime(now: number): number {
    return Math.min(now, this.clock.nextTickAt);
  }

  /**
   * Keeps every frame this leg sends on the clock's ticks (sendNow waits for the next one)
   * until the returned function is called: audio fed on the ticks, a conference's mix, comes
   * one frame a tick, and frames sent between ticks as a stream's audio arrives would find it
   * missing on one and piling up on the next, a gap each time the server's chunks bunch up.
   */
  paceByTicks(): () => void {
    this.tickPaced++;
    let held = true;
    return () => {
      if (held) this.tickPaced--;
      held = false;
    };
  }

  /** Tells `tap` of every digit received (RFC 4733 or in-band) until the function is called. */
  addDigitTap(tap: (digit: ReceivedDtmf) => void): () => void {
    this.digitTaps.add(tap);
    return () => this.digitTaps.delete(tap);
  }

  get stats(): MediaSessionStats {
    return {
      port: this.rtp.port,
      packetsSent: this.rtp.sender.packetCount,
      octetsSent: this.rtp.sender.octetCount,
      packetsReceived: this.received,
      malformed: this.rtp.counters.malformed,
      foreign: this.rtp.counters.foreign,
      inbound: this.inbound.stats,
      relayDropped: this.sender.relayDropped,
      ...(this.transport && { webrtc: this.transport.stats }),
      ...(this.protection && { sdes: this.protection.stats }),
    };
  }

  /** Stops the clock, ends playback and digits, sends RTCP BYE and frees the ports. */
  async close(reason?: string): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopTicking();
    this.catchUp?.cancel();
    this.relayTo(null);
    this.taps.clear();
    this.outboundTaps.clear();
    this.tickTaps.clear();
    this.digitTaps.clear();
    this.outbound.stopDigits();
    this.stopPlayback();
    for (const digit of this.digits.flush()) this.reportRfc4733(digit);
    await this.rtp.close(reason);
  }

  private get receiving(): boolean {
    return this.direction === 'sendrecv' || this.direction === 'recvonly';
  }

  private get sending(): boolean {
    return this.direction === 'sendrecv' || this.direction === 'sendonly';
  }

  private receive(packet: RtpPacket): void {
    if (this.closed) return;
    this.received++;
    if (this.telephoneEvent && packet.payloadType === this.telephoneEvent.payloadType) {
      for (const digit of this.digits.process(packet)) this.reportRfc4733(digit);
      // Sent in place of the audio, in its numbering: its turn is silence, not a loss.
      if (this.receiving && this.decodingReceived) this.inbound.noAudio(packet);
      return;
    }
    if (!this.receiving) return;
    if (this.relayTarget) this.relayTarget.forward(packet, this.formats);
    if (this.decodingReceived) this.inbound.push(packet);
  }

  /**
   * Whether received audio is decoded: always, but on a relaying leg only while it is tapped,
   * the leg it relays to has outbound taps (which hear what the relayed packets say), or it
   * relays Opus (see relayTo).
   */
  private get decodingReceived(): boolean {
    return !this.relayTarget || this.taps.size > 0 || this.packetTaps.size > 0 || this.handsOn;
  }

  /** Whether a relaying leg hands what it heard to the leg it relays to (relayedFrame). */
  private get handsOn(): boolean {
    const target = this.relayTarget;
    return (
      target !== null &&
      target.callRate === this.callRate &&
      (target.outboundTaps.size > 0 || this.isOpus)
    );
  }

  /** An Opus leg; a relay joins legs of one encoding, so both sides of an Opus relay are. */
  private get isOpus(): boolean {
    return this.formats[0]?.encoding === 'opus';
  }

  /** Sends a packet relayed from another leg, in this leg's payload type for its encoding. */
  private forward(packet: RtpPacket, formats: readonly AudioFormat[]): void {
    if (this.closed || !this.sending || !this.rtp.destination) return;
    if (this.outbound.playout.active > 0 || this.outbound.sendingDigits) return;
    this.sender.relayed(packet, formats, this.formats);
  }

  private reportRfc4733(digit: { digit: DtmfDigit; durationMs: number }): void {
    this.digitHeard({ digit: digit.digit, source: 'rfc4733', durationMs: digit.durationMs });
  }

  private digitHeard(digit: ReceivedDtmf): void {
    this.report('onDigit', digit);
    for (const tap of this.digitTaps) tap(digit);
  }

  private timedOut(silentForMs: number): void {
    if (!this.closed && this.receiving) this.report('onMediaTimeout', silentForMs);
  }

  private tick(at: number): void {
    if (this.closed) return;
    if (this.receiving) {
      const frame = this.inbound.frame();
      if (frame) for (const tap of this.taps) tap(frame);
      if (frame && this.handsOn) this.relayTarget!.relayedFrame = frame;
    }
    for (const tap of this.tickTaps) tap();
    const now = this.clock.now();
    if (!this.pacer.tickSends(now, this.playoutReady)) return;
    this.sendFrame(now, at);
  }

  /** Sends the next frame; `slot` is when it counts as sent should it start a talkspurt. */
  private sendFrame(now: number, slot: number): void {
    const ownAudio = this.outbound.playout.active > 0 || this.outbound.sendingDigits;
    const item = this.outbound.next();
    this.pacer.sent(now, slot, item.kind === 'event' || item.pcm !== this.outbound.playout.silence);
    const relayed = this.relayedInto > 0 ? this.relayedFrame : null;
    this.relayedFrame = null;
    // Something of its own while relayed into: an Opus relay's audio is mixed into it.
    const played =
      relayed && ownAudio && this.isOpus && item.kind === 'audio'
        ? { ...item, pcm: mix([item.pcm, relayed]) }
        : item;
    if (this.outboundTaps.size > 0) {
      // Relayed into with nothing of its own: the caller hears the relayed packets.
      const heard =
        (!ownAudio && relayed) ||
        (played.kind === 'audio' ? played.pcm : this.outbound.playout.silence);
      for (const tap of this.outboundTaps) tap(heard);
    }
    if (!this.sending || !this.rtp.destination) return;
    // Relayed into and nothing of its own to say: the relayed packets are the audio.
    if (this.relayedInto > 0 && !ownAudio) return;
    this.send(played);
  }

  private send(item: OutboundItem): void {
    if (item.kind === 'audio') this.sender.audio(item.pcm, item.band ?? null);
    else this.sender.event(item.packet, this.telephoneEvent!.payloadType);
  }

  private inboundPath(spec: MediaSessionSpec, rate: AudioFormat['rate']): InboundPath {
    const path = new InboundPath({
      rate,
      formats: spec.formats,
      noiseCancellationLevel: spec.noiseCancellationLevel,
      onInbandDigit: spec.inbandDtmf
        ? (digit) => this.digitHeard({ digit, source: 'inband' })
        : undefined,
    });
    path.setInbandDetection(this.telephoneEvent === null);
    return path;
  }

  /** The first negotiated format is at another rate: both paths start again at it. */
  private moveRate(rate: AudioFormat['rate']): void {
    this.callRate = rate;
    this.inbound = this.inboundPath({ ...this.spec, formats: this.formats }, rate);
    this.outbound = new OutboundPath({
      rate,
      telephoneEventRate: this.telephoneEvent?.rate ?? null,
    });
    this.sender.setRate(rate, this.outbound.playout.silence);
  }

  /** @internal the transport's end, told to the listener once. */
  transportFailed(failure: WebrtcFailure): void {
    if (!this.closed) this.report('onTransportFailed', failure);
  }

  private report<K extends keyof MediaSessionListener>(
    event: K,
    ...args: Parameters<NonNullable<MediaSessionListener[K]>>
  ): void {
    try {
      (this.listener[event] as ((...a: typeof args) => void) | undefined)?.(...args);
    } catch (error) {
      if (event !== 'onError') this.report('onError', error as Error);
    }
  }
}
