import type { Destination } from '../../sip/transport/transport-layer.js';
import type { Scheduler } from '../../core/scheduler.js';
import type { DtmfDigit } from '../../media/dtmf/dtmf-digit.js';
import type { AudioFormat } from '../../media/pipeline/audio-format.js';
import { carriesDtmf, parseSipInfoDtmf } from '../../media/dtmf/sip-info-dtmf.js';
import type {
  MachineDetectionSettings,
  MachineVerdict,
} from '../../media/pipeline/machine-classifier.js';
import type {
  PlaySource,
  SessionEvent,
  StreamForkSpec,
  StreamNews,
} from '../../media/worker/protocol.js';
import type { Dialog } from '../../sip/dialog/dialog.js';
import { snapshotOf, type DialogSnapshot } from '../../sip/dialog/dialog-snapshot.js';
import type { OfferReply, SessionOffer } from '../../sip/dialog/dialog-delegate.js';
import { responseTo } from '../../sip/transaction/response-to.js';
import { DEFAULT_AUDIO_CODECS, SdpParseError, SdpSession } from '../../sip/sdp/index.js';
import { hangupCause } from '../hangup-causes.js';
import { INITIAL_MEDIA, MEDIA_TIMEOUT_MS, mediaUpdateFrom } from '../media-binding.js';
import type { MediaService, OpenedMedia } from '../media-service.js';
import type { SipService } from '../sip-service.js';
import { webrtcLegTransport, webrtcUnavailable, type WebrtcSupport } from '../webrtc-support.js';
import { endAfterAnswer, endOfWebrtcTransport, type LegEnd } from './leg-end.js';

export type LegDirection = 'inbound' | 'outbound';
export type LegState = 'setup' | 'ringing' | 'early' | 'answered' | 'ended';

/** What every leg runs on. */
export interface LegEnvironment {
  sip: SipService;
  media: MediaService;
  /** Address put in SDP (VOXGATE_PUBLIC_HOST). */
  publicHost: string;
  scheduler: Scheduler;
  log: { warn(object: object, message: string): void };
  /** The process's DTLS certificate, for WebRTC legs; none are taken without it. */
  webrtc?: WebrtcSupport;
  /** Whether a plain SIP peer's offer of Opus is taken (VOXGATE_SIP_OPUS); true by default. */
  sipOpus?: boolean;
}

/** How a digit arrived: RFC 4733 events, tones heard in the audio, or SIP INFO. */
export type DigitSource = 'rfc4733' | 'inband' | 'sip-info';

export interface LegEvents {
  /** 180, or 183 (early media), or our own ringing for inbound legs. */
  onRinging?(): void;
  onEarlyMedia?(): void;
  onAnswered?(): void;
  onDigit?(digit: DtmfDigit, via: DigitSource): void;
  onEnded?(end: LegEnd): void;
  /** News of a stream forked from this leg's audio. */
  onStream?(streamId: string, news: StreamNews): void;
  /** The leg took the floor of the conference it is in (its mixing worker says so). */
  onConferenceFloor?(conferenceId: string): void;
}

/** Epoch ms of a leg's moments. */
export interface LegTimes {
  initiation: number;
  ring?: number;
  answer?: number;
  end?: number;
}

/**
 * One side of a call: its SIP dialog and its media session (the session id is the leg's
 * uuid). It plays, speaks and sends digits, reports digits from RTP and SIP INFO, answers
 * re-INVITEs (hold, moves), and ends exactly once with a cause, freeing its media.
 */
export abstract class CallLeg {
  state: LegState = 'setup';
  readonly times: LegTimes;
  result: LegEnd | null = null;
  readonly ended: Promise<LegEnd>;
  events: LegEvents = {};
  protected sdp: SdpSession | null = null;
  protected dialog: Dialog | null = null;
  private resolveEnded!: (end: LegEnd) => void;
  private mediaOpened = false;
  /** Whether the leg's media is WebRTC (ICE, DTLS-SRTP): a browser or a mobile SDK. */
  private webrtc = false;

  constructor(
    protected readonly env: LegEnvironment,
    readonly uuid: string,
    readonly direction: LegDirection,
  ) {
    this.times = { initiation: env.scheduler.now() };
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
  }

  get isOver(): boolean {
    return this.state === 'ended';
  }

  /**
   * The leg's confirmed dialog as it stands, for another node to end it should this one die;
   * null before the answer and once the leg is over.
   */
  dialogSnapshot(): DialogSnapshot | null {
    const dialog = this.dialog;
    if (this.isOver || dialog === null || dialog.state !== 'confirmed') return null;
    return snapshotOf(dialog);
  }

  /** Ends the leg from our side (CANCEL, a final response, or BYE as its state asks). */
  abstract hangup(end: LegEnd): Promise<void>;

  /**
   * Ends the leg now as `end` when a hangup is still waiting for the far end (a CANCEL no
   * final response answered): shutdown does not wait on peers. What is on the wire goes on.
   */
  abandon(end: LegEnd): void {
    this.finish(end);
  }

  speak(text: string, voice: 'MAN' | 'WOMAN', language: string, options: PlayOptions = {}) {
    return this.play({ kind: 'speech', text, voice, language }, options);
  }

  /** Plays into the leg; resolves true when it played to the end, false when stopped. */
  async play(source: PlaySource, options: PlayOptions = {}): Promise<boolean> {
    if (!this.mediaOpened || this.isOver) return false;
    const result = await this.env.media.send({
      type: 'play',
      sessionId: this.uuid,
      source,
      mode: options.mix === false ? 'replace' : 'mix',
      loop: options.loop ?? false,
      ...(options.tag === undefined ? {} : { tag: options.tag }),
    });
    return result.completed;
  }

  /**
   * Stops what plays, or only what was played with `tag`; a leg whose media went away has
   * nothing to stop (logged, not thrown).
   */
  async stopPlayback(tag?: string): Promise<void> {
    if (!this.mediaOpened || this.isOver) return;
    try {
      await this.env.media.send({
        type: 'stopPlayback',
        sessionId: this.uuid,
        ...(tag === undefined ? {} : { tag }),
      });
    } catch (error) {
      this.env.log.warn({ err: error, callUuid: this.uuid }, 'playback could not be stopped');
    }
  }

  /**
   * Sends digits (RFC 4733, or tones when the peer has no telephone-event). True once they are
   * all out; false when stopped, or when the leg or its media went away first (logged, never
   * thrown: callers send and move on).
   */
  async sendDigits(digits: string): Promise<boolean> {
    if (!this.mediaOpened || this.isOver) return false;
    try {
      return (await this.env.media.send({ type: 'sendDigits', sessionId: this.uuid, digits }))
        .completed;
    } catch (error) {
      this.env.log.warn({ err: error, callUuid: this.uuid }, 'digits could not be sent');
      return false;
    }
  }

  /**
   * Waits until the far end has been quiet for `silenceMs`, at most `maxMs`: true when it was,
   * false when the time ran out (or the leg has no media).
   */
  async waitForSilence(silenceMs: number, maxMs: number): Promise<boolean> {
    if (!this.mediaOpened || this.isOver) return false;
    const command = { type: 'waitForSilence', sessionId: this.uuid, silenceMs, maxMs } as const;
    return (await this.env.media.send(command)).silent;
  }

  /**
   * Waits until the far end plays a voicemail beep, at most `maxMs`: true when it did, false
   * when the time ran out (or the leg has no media).
   */
  async waitForBeep(maxMs: number): Promise<boolean> {
    if (!this.mediaOpened || this.isOver) return false;
    const command = { type: 'waitForBeep', sessionId: this.uuid, maxMs } as const;
    return (await this.env.media.send(command)).beeped;
  }

  /**
   * Answering-machine detection on what the far end says from now on: the verdict, unknown
   * (call-ended) when the leg has no media or its media closes first.
   */
  async detectMachine(settings: MachineDetectionSettings): Promise<MachineVerdict> {
    if (!this.mediaOpened || this.isOver) {
      return { result: 'unknown', reason: 'call-ended', afterMs: 0, firstAudioMs: null, words: 0 };
    }
    return this.env.media.send({ type: 'detectMachine', sessionId: this.uuid, settings });
  }

  /**
   * Opens the media session; its port goes into our SDP. A WebRTC leg (a browser) gets fresh
   * ICE credentials and the process's fingerprint in its SDP, and ICE, DTLS-SRTP and rtcp-mux
   * on its port; when it cannot have them, the reason is thrown as a WebrtcUnavailable. A
   * leg with `sdes` (a peer over SIP over TLS) may carry SDES-SRTP on its own ports.
   */
  protected async openMedia(
    near?: string,
    webrtc = false,
    sdes: 'required' | 'optional' | null = null,
  ): Promise<OpenedMedia> {
    const transport = webrtc ? webrtcLegTransport(this.env.webrtc, this.env.publicHost) : null;
    if (typeof transport === 'string') throw new WebrtcUnavailable(transport);
    this.webrtc = transport !== null;
    const opened = await this.env.media.open(
      this.uuid,
      {
        ...INITIAL_MEDIA,
        inbandDtmf: true,
        mediaTimeoutMs: MEDIA_TIMEOUT_MS,
        ...(transport && { webrtc: transport.spec }),
        ...(sdes && !transport && { sdes }),
      },
      (event) => this.mediaEvent(event),
      near === undefined ? {} : { near },
    );
    this.mediaOpened = true;
    if (this.isOver) {
      // Ended (CANCEL, BYE, a hangup) while its media was opening: close what just opened.
      this.mediaOpened = false;
      this.env.media.close(this.uuid, this.result?.cause.name);
    }
    this.sdp = new SdpSession({
      address: opened.address,
      port: opened.port,
      ...(transport && { webrtc: transport.sdp }),
      ...(!transport && this.env.sipOpus === false && { answerCodecs: DEFAULT_AUDIO_CODECS }),
      ...(sdes && !transport && { sdes }),
    });
    return opened;
  }

  /** Whether this gateway can open WebRTC legs (it has a DTLS certificate and an IP to offer). */
  protected get webrtcAvailable(): boolean {
    return webrtcUnavailable(this.env.webrtc, this.env.publicHost) === null;
  }

  /**
   * Offer/answer of plain RTP on the port a WebRTC leg opened: for the plain RTP phones of a
   * user rung beside its browsers, over one media session. Until one of them answers, the
   * port is the WebRTC transport's (a phone's early RTP is dropped).
   */
  protected plainSdp(opened: OpenedMedia): SdpSession {
    return new SdpSession({
      address: opened.address,
      port: opened.port,
      ...(this.env.sipOpus === false && { answerCodecs: DEFAULT_AUDIO_CODECS }),
    });
  }

  /**
   * A plain RTP phone answered a WebRTC leg's offer of `plain` (see plainSdp): offer/answer
   * goes on with it, and the media session without its WebRTC transport, told before the
   * answer's audio is applied (one worker runs a session's commands in order).
   */
  protected answeredPlain(plain: SdpSession): void {
    this.sdp = plain;
    if (!this.webrtc) return;
    this.webrtc = false;
    if (!this.mediaOpened || this.isOver) return;
    this.env.media
      .send({ type: 'updateSession', sessionId: this.uuid, changes: { webrtc: null } })
      .catch((error: Error) => {
        if (this.isOver) return;
        this.env.log.warn({ err: error, callUuid: this.uuid }, 'WebRTC transport not dropped');
      });
  }

  /**
   * Applies what offer/answer settled to the media session. Audio the media plane cannot take
   * throws at once, before anything is sent; the promise settles with the worker's answer.
   */
  protected applyAudio(audio: Parameters<typeof mediaUpdateFrom>[0]): Promise<void> {
    if (!this.mediaOpened || this.isOver) return Promise.resolve();
    const changes = mediaUpdateFrom(audio);
    this.format = changes.formats?.[0] ?? this.format;
    return this.env.media
      .send({ type: 'updateSession', sessionId: this.uuid, changes })
      .then(() => undefined);
  }

  /** The audio format offer/answer settled last (null before). */
  format: AudioFormat | null = null;

  /**
   * How to find the peer's connection again, for a peer registered over one (a browser, a
   * phone on TCP): given the dialog's remote target, the connection its registration is held
   * on now. Requests in the dialog go there once the peer connected again.
   */
  reachPeer: ((contact: string) => Promise<Destination | null>) | null = null;

  /** Watches the confirmed dialog: BYE, INFO digits, re-INVITE and UPDATE offers. */
  protected watchDialog(dialog: Dialog, remoteParty: 'Caller' | 'Callee'): void {
    this.dialog = dialog;
    const reach = this.reachPeer;
    dialog.delegate = {
      ...(reach && { reachableAt: () => reach(dialog.remoteTarget) }),
      onTerminated: (end) => {
        if (end.kind === 'bye' && end.by === 'local') return;
        const cause =
          end.kind === 'bye' ? hangupCause('Normal Hangup') : hangupCause('Network Error');
        this.finish(endAfterAnswer(cause, end.kind === 'bye' ? remoteParty : 'Error'));
      },
      onInfo: (request, transaction) => {
        const contentType = request.headers.get('Content-Type') ?? '';
        try {
          const found = parseSipInfoDtmf(contentType, request.body.toString('utf8'));
          transaction.respond(responseTo(request, 200));
          this.events.onDigit?.(found.digit, 'sip-info');
        } catch (error) {
          // RFC 3261 21.4.13: 415 for a body type we do not take; a DTMF body that does not
          // read is a bad request.
          const status = carriesDtmf(contentType) ? 400 : 415;
          transaction.respond(responseTo(request, status, { reason: (error as Error).message }));
        }
      },
      onOffer: (offer) => this.answerOffer(offer),
    };
  }

  /** Ends the leg once: records the time, closes its media, tells the owner. */
  protected finish(end: LegEnd): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.times.end = this.env.scheduler.now();
    this.result = end;
    if (this.mediaOpened) this.env.media.close(this.uuid, end.cause.name);
    this.resolveEnded(end);
    this.events.onEnded?.(end);
  }

  protected answered(): void {
    this.state = 'answered';
    this.times.answer = this.env.scheduler.now();
    if (this.webrtc && this.mediaOpened) this.tellWebrtcAnswered();
    this.events.onAnswered?.();
  }

  /**
   * A browser checks once it holds both descriptions, which for a call it rings, or one it
   * placed and we answer late, is at the answer: its transport waits for checks from here.
   */
  private tellWebrtcAnswered(): void {
    const changes = { webrtc: { answered: true } };
    this.env.media
      .send({ type: 'updateSession', sessionId: this.uuid, changes })
      .catch((error: Error) => {
        if (this.isOver) return;
        this.env.log.warn({ err: error, callUuid: this.uuid }, 'WebRTC answer not applied');
      });
  }

  protected ringing(): void {
    if (this.times.ring === undefined) this.times.ring = this.env.scheduler.now();
    if (this.state === 'setup') this.state = 'ringing';
    this.events.onRinging?.();
  }

  private async answerOffer(offer: SessionOffer): Promise<OfferReply> {
    if (!this.sdp || offer.sdp === null) return { status: 488, reason: 'An SDP offer is required' };
    try {
      const outcome = this.sdp.answer(offer.sdp);
      if (!outcome.ok) return { status: 488, reason: outcome.reason };
      await this.applyAudio(outcome.audio);
      return { sdp: outcome.sdp };
    } catch (error) {
      if (error instanceof SdpParseError)
        return { status: 400, reason: error.message.slice(0, 100) };
      throw error;
    }
  }

  /** Forks this leg's audio to a WebSocket server; false when the leg has no media now. */
  async startStream(spec: StreamForkSpec): Promise<boolean> {
    if (!this.mediaOpened || this.isOver) return false;
    await this.env.media.send({ type: 'startStream', sessionId: this.uuid, stream: spec });
    return true;
  }

  /** Stops a stream of this leg; false when it was not running. */
  async stopStream(streamId: string): Promise<boolean> {
    if (!this.mediaOpened || this.isOver) return false;
    return (await this.env.media.send({ type: 'stopStream', sessionId: this.uuid, streamId }))
      .existed;
  }

  private mediaEvent(event: SessionEvent): void {
    switch (event.type) {
      case 'stream': {
        this.events.onStream?.(event.streamId, event as StreamNews);
        return;
      }
      case 'dtmf':
        this.events.onDigit?.(event.digit, event.source);
        return;
      case 'conferenceFloor':
        this.events.onConferenceFloor?.(event.conferenceId);
        return;
      case 'mediaTimeout':
        void this.hangup(endAfterAnswer(hangupCause('Media Timeout'), 'Service'));
        return;
      case 'transportFailed':
        // A browser closes its connection as it hangs up: after its BYE, that is no fault.
        if (this.isOver) return;
        this.env.log.warn({ callUuid: this.uuid, reason: event.message }, 'WebRTC media ended');
        void this.hangup(endOfWebrtcTransport(event, this.direction, this.state));
        return;
      case 'ended':
        // The media worker died: the call cannot carry audio any more.
        this.mediaOpened = false;
        this.env.log.warn({ callUuid: this.uuid, cause: event.cause }, 'call media ended');
        void this.hangup({
          cause: hangupCause('Internal Error'),
          source: 'Error',
          status: this.state === 'answered' ? 'completed' : 'failed',
          reason: `the call's media worker ended (${event.cause})`,
        });
        return;
      default:
        return;
    }
  }
}

export interface PlayOptions {
  loop?: boolean;
  /** False replaces what plays; true (default) mixes with it. */
  mix?: boolean;
  /** Names what plays, so that stopPlayback(tag) can stop it alone. */
  tag?: string;
}

/** A WebRTC leg was asked for and cannot be had: the reason, for a 488 or the call's end. */
export class WebrtcUnavailable extends Error {
  override name = 'WebrtcUnavailable';
}
