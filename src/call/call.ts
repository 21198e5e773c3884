import type { CallbackDelivery, FetchedDocument } from '../callbacks/index.js';
import { formatCallbackTime } from '../core/record-time.js';
import type { Scheduler, TimerHandle } from '../core/scheduler.js';
import type { PlaySource } from '../media/worker/protocol.js';
import type { CallConversion, MachineDetectionOutcome } from '../state/records.js';
import type {
  MachineDetectionSettings,
  MachineVerdict,
} from '../media/pipeline/machine-classifier.js';
import type { State } from '../state/state.js';
import { AnswerApp, type AppStart } from './app/answer-app.js';
import type { AppCall, HttpMethod } from './app/app-call.js';
import { DigitCollector } from './app/digit-collector.js';
import type { RateDeck } from './billing/rate-deck.js';
import { logCallAnswered, logCallEnded, logCallStarted } from './call-log.js';
import { hangupCause } from './hangup-causes.js';
import type { CallLeg, DigitSource } from './legs/call-leg.js';
import type { LegEnd } from './legs/leg-end.js';
import { writeLegRecord } from './leg-record.js';
import type { AccountLimiter } from '../limits/account-limiter.js';
import { hangupCallback } from './hangup-params.js';
import {
  runMachineDetection,
  type MachineDetectionMetrics,
  type MachineDetectionRequest,
} from './machine-detection.js';
import type { LegDialog } from './orphaned-dialogs.js';
import type { OwedRecords } from './owed-records.js';
import { CallStreams } from './streams/call-streams.js';
import type { StreamRequest } from './streams/stream-request.js';
import type { DialInstruction } from './xml/answer-document.js';
import type { ConferenceInstruction } from './xml/conference-instruction.js';
import type {
  CallRecordings,
  RecordingRequest,
  StartedRecording,
} from './recordings/call-recordings.js';

/** What every call runs on. */
export interface CallServices {
  state: State;
  callbacks: CallbackDelivery;
  /** Where end-of-call records go, and hangup callbacks after them, the store away or not. */
  records: OwedRecords;
  /** The account limits (concurrent calls and streams, calls per second); none: no limits. */
  limits?: AccountLimiter;
  deck: RateDeck;
  /** USD per started minute of an audio stream. */
  streamRate?: string;
  scheduler: Scheduler;
  /** Machine detection results on /metrics. */
  machineDetection?: MachineDetectionMetrics;
  /** Records calls (the Record element); without it Record ends the call as unsupported. */
  recordings?: CallRecordings;
  /** Hears each call start, answer and end (the cluster keeps who runs which call). */
  watcher?: CallWatcher;
  log: {
    info(object: object, message: string): void;
    warn(object: object, message: string): void;
  };
}

export interface CallWatcher {
  started(call: Call): void;
  answered(call: Call): void;
  /**
   * A stream of the call started, connected or ended (call.streams.live()), or a leg it placed
   * started, was answered or ended (call.childLegs()).
   */
  changed(call: Call): void;
  /** After its record and hangup callback went, or were kept owed while the store is away. */
  ended(call: Call): void;
}

/** A leg a call placed (Dial, a trunk), as the cluster's directory keeps it. */
export interface LiveChildLeg {
  uuid: string;
  from: string;
  to: string;
  initiated: number;
  answered: number | null;
  /** Its dialog once answered, for a survivor to send its BYE (absent from older entries). */
  dialog?: LegDialog | null;
}

/** Who a call belongs to: the account that placed it or whose number it reached. */
export interface CallAccount {
  /** The auth id whose tokens sign its callbacks (a subaccount's own, or the main account's). */
  authId: string;
  /** The main account (the tenant). */
  account: string;
  subaccount: string | null;
}

export interface CallUrls {
  answer: AppStart;
  ring?: { url: string; method: HttpMethod } | null;
  hangup?: { url: string; method: HttpMethod } | null;
}

export interface CallInit {
  uuid: string;
  requestUuid: string | null;
  leg: CallLeg;
  from: string;
  to: string;
  callerName: string | null;
  owner: CallAccount;
  urls: CallUrls;
  sourceIp: string;
  callType?: 'voice' | 'chatapp_voice';
  parentCallUuid?: string | null;
  /** Seconds after the answer before the call is ended (6000 Scheduled Hangup). */
  timeLimit?: number;
  /** Digits sent once answered (or at early media with sendOnPreanswer). */
  sendDigits?: { digits: string; onPreanswer: boolean } | null;
  /** Seconds after ringing starts before the call is dropped. */
  hangupOnRing?: number | null;
  /** Answering-machine detection from the answer (outbound calls). */
  machineDetection?: MachineDetectionRequest | null;
}

/**
 * One call: its A leg, the answer-XML application that drives it, its ring, answer and hangup
 * callbacks (signed, with the voice document's parameters), and its record written once it is
 * over. The application starts when the leg is answered (outbound) or at once (inbound, which
 * it answers itself).
 */
export class Call implements AppCall {
  readonly uuid: string;
  readonly digits: DigitCollector;
  readonly finished: Promise<void>;
  private readonly digitListeners = new Set<(digit: string, via: DigitSource) => void>();
  /** The party Dial connected, while it is connected. */
  bLeg: CallLeg | null = null;
  /** The legs it placed (Dial's, a trunk's) that are not over, with their record's parties. */
  private readonly placedLegs = new Map<string, { leg: CallLeg; from: string; to: string }>();
  /** Its audio streams (REST and the answer XML's Stream). */
  readonly streams: CallStreams;
  /** Reported with POST Call/{uuid}/Conversion/ while the call is live; its record keeps it. */
  conversion: CallConversion | null = null;
  /** Answering-machine detection's outcome once decided; its record keeps it. */
  machineDetection: MachineDetectionOutcome | null = null;
  /** When early media started, for SessionStart. */
  private sessionStart: number | null = null;
  private timers: TimerHandle[] = [];
  private appStarted = false;
  private readonly dialAnswerWaiters: (() => void)[] = [];
  private rang = false;
  private resolveFinished!: () => void;

  constructor(
    private readonly services: CallServices,
    readonly init: CallInit,
  ) {
    this.uuid = init.uuid;
    this.digits = new DigitCollector(services.scheduler);
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve));
    const leg = init.leg;
    this.streams = new CallStreams({
      uuid: init.uuid,
      leg,
      owner: init.owner,
      services,
      streamRate: services.streamRate ?? '0.00300',
      // Once the call is over its entry goes: nothing to tell.
      onChange: () => {
        if (!this.over) services.watcher?.changed(this);
      },
    });
    leg.events = {
      onRinging: () => this.ringing(),
      onEarlyMedia: () => this.earlyMediaStarted(),
      onAnswered: () => this.startAnswered(),
      onDigit: (digit, via) => {
        this.digits.press(digit);
        for (const listener of this.digitListeners) listener(digit, via);
      },
      onEnded: (end) => void this.ended(end),
      onStream: (streamId, news) => this.streams.news(streamId, news),
      onConferenceFloor: (conferenceId) => {
        if (conferenceId === this.conferenceUuid) this.onConferenceFloor?.();
      },
    };
    services.watcher?.started(this);
    logCallStarted(services.log, this);
    // A leg that ended before its call was made (a CANCEL during routing) still gets its
    // record and its hangup callback.
    if (leg.result) void this.ended(leg.result);
  }

  /** Hears every digit the caller presses until the returned function is called. */
  onDigit(listener: (digit: string, via: DigitSource) => void): () => void {
    this.digitListeners.add(listener);
    return () => this.digitListeners.delete(listener);
  }

  get leg(): CallLeg {
    return this.init.leg;
  }

  get direction(): 'inbound' | 'outbound' {
    return this.init.leg.direction;
  }

  /** False while an outbound call waits to be dialled (queued); true for inbound calls. */
  get dialled(): boolean {
    const leg = this.init.leg as CallLeg & { inviteSent?: boolean };
    return leg.inviteSent ?? true;
  }

  get over(): boolean {
    return this.init.leg.isOver;
  }

  get answered(): boolean {
    return this.leg.state === 'answered';
  }

  /**
   * Follows a leg this call placed until it ends, so that the cluster's directory knows it (a
   * survivor writes its record should this node die). Call childLegChanged when it answers.
   */
  trackChildLeg(leg: CallLeg, parties: { from: string; to: string }): void {
    this.placedLegs.set(leg.uuid, { leg, ...parties });
    this.childLegChanged();
    void leg.ended.then(() => {
      this.placedLegs.delete(leg.uuid);
      this.childLegChanged();
    });
  }

  childLegChanged(): void {
    if (!this.over) this.services.watcher?.changed(this);
  }

  /** The legs it placed that are not over. */
  childLegs(): LiveChildLeg[] {
    return [...this.placedLegs.values()].map(({ leg, from, to }) => ({
      uuid: leg.uuid,
      from,
      to,
      initiated: leg.times.initiation,
      answered: leg.times.answer ?? null,
      dialog: leg.dialogSnapshot(),
    }));
  }

  /** Starts the application now (inbound calls: the app answers when it runs). */
  startApplication(): void {
    if (this.appStarted) return;
    this.appStarted = true;
    void new AnswerApp(this, this.services.scheduler).run(this.init.urls.answer);
  }

  requestParams(): Record<string, string> {
    const { init } = this;
    const params: Record<string, string> = {
      CallUUID: this.uuid,
      From: init.from,
      To: init.to,
      Direction: this.direction,
      CallStatus: this.leg.state === 'answered' ? 'in-progress' : 'ringing',
      ALegUUID: this.uuid,
      STIRVerification: 'Not Applicable',
      STIRAttestation: '',
    };
    if (init.requestUuid) {
      params.RequestUUID = init.requestUuid;
      params.ALegRequestUUID = init.requestUuid;
    }
    if (init.callerName) params.CallerName = init.callerName;
    if (this.sessionStart !== null) params.SessionStart = formatCallbackTime(this.sessionStart);
    // Synchronous detection: the answer_url request and every later one carry the result.
    if (this.machineDetection?.mode === 'sync')
      params.Machine = String(this.machineDetection.machine);
    return params;
  }

  fetch(url: string, method: HttpMethod, params: Record<string, string>): Promise<FetchedDocument> {
    return this.services.callbacks.fetchDocument({
      url,
      method,
      params,
      accountId: this.init.owner.authId,
    });
  }

  answer(): void {
    const leg = this.leg as CallLeg & { answer?: () => void };
    if (this.direction === 'inbound' && leg.state !== 'answered' && !leg.isOver) leg.answer?.();
  }

  earlyMedia(): void {
    const leg = this.leg as CallLeg & { earlyMedia?: () => void };
    if (this.direction === 'inbound') leg.earlyMedia?.();
  }

  play(source: PlaySource, options: { loop?: boolean; mix?: boolean }): Promise<boolean> {
    return this.leg.play(source, options);
  }

  stopPlayback(): Promise<void> {
    return this.leg.stopPlayback();
  }

  sendDigits(digits: string): Promise<boolean> {
    return this.leg.sendDigits(digits);
  }

  waitForSilence(silenceMs: number, maxMs: number): Promise<boolean> {
    return this.leg.waitForSilence(silenceMs, maxMs);
  }

  waitForBeep(maxMs: number): Promise<boolean> {
    return this.leg.waitForBeep(maxMs);
  }

  detectMachine(settings: MachineDetectionSettings): Promise<MachineVerdict> {
    return this.leg.detectMachine(settings);
  }

  async hangup(end: LegEnd): Promise<void> {
    const status =
      this.leg.state === 'answered'
        ? 'completed'
        : end.status === 'completed'
          ? 'failed'
          : end.status;
    await this.leg.hangup({ ...end, status });
  }

  /** Ends the call now as `end` if its hangup still waits for the far end (shutdown). */
  abandon(end: LegEnd): void {
    if (!this.over) this.leg.abandon({ ...end, status: this.answered ? 'completed' : 'failed' });
  }

  dial?: (instruction: DialInstruction) => Promise<Record<string, string>>;

  /** Runs `run` once the next Dial's B leg is connected (Record's startOnDialAnswer). */
  onDialAnswer(run: () => void): void {
    this.dialAnswerWaiters.push(run);
  }

  /** A Dial connected its B leg: what waited for that starts. */
  dialAnswered(): void {
    for (const run of this.dialAnswerWaiters.splice(0)) run();
  }

  conference?: (instruction: ConferenceInstruction) => Promise<Record<string, string> | null>;
  /** The conference the call last joined; its record keeps it. */
  conferenceUuid: string | null = null;
  /** Told when the call takes the floor of its conference (set by the room while it is in). */
  onConferenceFloor: (() => void) | null = null;

  log(message: string, fields: Record<string, unknown> = {}): void {
    this.services.log.warn({ callUuid: this.uuid, ...fields }, message);
  }

  private ringing(): void {
    if (this.sessionStart === null) this.sessionStart = this.services.scheduler.now();
    const { ring } = this.init.urls;
    if (this.rang) return;
    this.rang = true;
    if (ring && this.direction === 'outbound') {
      this.notify(ring.url, ring.method, {
        ...this.requestParams(),
        Event: 'Ring',
        CallStatus: 'ringing',
      });
    }
    const seconds = this.init.hangupOnRing;
    if (seconds) {
      this.timers.push(
        // hangup_on_ring: "Max seconds from ring start to hangup", answered or not.
        this.services.scheduler.after(seconds * 1000, () => {
          void this.hangup({
            cause: hangupCause('Scheduled Hangup'),
            source: 'Service',
            status: this.answered ? 'completed' : 'no-answer',
          });
        }),
      );
    }
  }

  private earlyMediaStarted(): void {
    const send = this.init.sendDigits;
    if (send?.onPreanswer) void this.leg.sendDigits(send.digits);
  }

  private startAnswered(): void {
    if (this.sessionStart === null)
      this.sessionStart = this.leg.times.answer ?? this.services.scheduler.now();
    this.services.watcher?.answered(this);
    logCallAnswered(this.services.log, this);
    const limit = this.init.timeLimit;
    if (limit) {
      this.timers.push(
        this.services.scheduler.after(limit * 1000, () => {
          void this.hangup({
            cause: hangupCause('Scheduled Hangup'),
            source: 'Service',
            status: 'completed',
          });
        }),
      );
    }
    const send = this.init.sendDigits;
    if (send && !send.onPreanswer) void this.leg.sendDigits(send.digits);
    if (this.direction !== 'outbound') return;
    const detection = this.init.machineDetection;
    if (!detection) return this.startApplication();
    void runMachineDetection(
      this,
      detection,
      (outcome) => (this.machineDetection = outcome),
      this.services.machineDetection,
    );
  }

  private async ended(end: LegEnd): Promise<void> {
    for (const timer of this.timers) timer.cancel();
    this.digits.close();
    logCallEnded(this.services.log, this, end);
    const { init, leg } = this;
    const [, recording] = await Promise.all([
      this.streams.callEnded(),
      this.services.recordings?.recordedOn(this.uuid) ?? null,
    ]);
    try {
      // The hangup callback after the record: an application that fetches the call from its
      // hangup_url finds it (should the store be away, both wait for it on this node).
      await writeLegRecord(
        this.services,
        leg,
        end,
        {
          requestUuid: init.requestUuid,
          from: init.from,
          to: init.to,
          owner: init.owner,
          sourceIp: init.sourceIp,
          callType: init.callType,
          parentCallUuid: init.parentCallUuid,
          conversion: this.conversion,
          machineDetection: this.machineDetection,
          conferenceUuid: this.conferenceUuid,
          recording,
        },
        hangupCallback(this, end),
      );
    } finally {
      this.services.watcher?.ended(this);
      this.resolveFinished();
    }
  }

  async stream(request: StreamRequest): Promise<{ streamId: string; ended: Promise<void> }> {
    const streamId = await this.streams.start(request);
    return { streamId, ended: this.streams.whenEnded(streamId) };
  }

  /** Records the call as the Record element or API asks (its first leg, both parties). */
  record(request: RecordingRequest): Promise<StartedRecording> {
    const { recordings } = this.services;
    if (!recordings) throw new Error('this gateway does not record calls');
    const { from, to, owner } = this.init;
    return recordings.start(
      { uuid: this.uuid, sessionId: this.leg.uuid, from, to, owner },
      request,
    );
  }

  /** Stops the call's recordings: the one at `url`, or all; how many it stopped. */
  stopRecording(url?: string): Promise<number> {
    return this.services.recordings?.stop(this.uuid, url) ?? Promise.resolve(0);
  }

  /** A signed callback whose answer is not needed (hangup_url, Dial callbackUrl...). */
  notify(url: string, method: HttpMethod, params: Record<string, string>): void {
    this.services.callbacks
      .send({ url, method, params, accountId: this.init.owner.authId })
      .catch((error: Error) => this.log('callback failed', { reason: error.message }));
  }
}
