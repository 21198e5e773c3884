import type { Destination } from '../../sip/transport/transport-layer.js';
import type { InviteFailure, InviteOutcome, OutgoingInvite } from '../../sip/ua/outgoing-invite.js';
import type { DigestCredentials } from '../../sip/auth/challenge-answer.js';
import type { AudioCodec } from '../../sip/sdp/audio-codecs.js';
import type { TimerHandle } from '../../core/scheduler.js';
import type { SdpSession } from '../../sip/sdp/index.js';
import { hangupCause } from '../hangup-causes.js';
import { legSdes, reachedOverTls, type SrtpPolicy } from '../srtp-policy.js';
import { CallLeg, type LegEnvironment, type LegEvents } from './call-leg.js';
import { endOfFailedInvite, type LegEnd } from './leg-end.js';

export interface DialOptions {
  uuid: string;
  /** The Request-URI (a sip: URI). */
  target: string;
  /** The To URI, when it differs from the target (a number dialled through a carrier). */
  to?: string;
  /** The From URI and display name (caller_name). */
  from: string;
  fromDisplayName?: string;
  headers?: [string, string][];
  credentials?: DigestCredentials;
  /** Seconds to ring before giving up (6010 Ring Timeout Reached). */
  ringTimeoutSeconds?: number;
  /** A leg to share a media worker with, for bridging (Dial's B leg names its A leg). */
  near?: string;
  /** Where the INVITE goes instead of the target's host (a registered endpoint's flow). */
  destination?: Destination;
  /** Route values the INVITE carries (a registered endpoint's Path, RFC 3327). */
  routeSet?: readonly string[];
  /**
   * Finds the target when it is known only asynchronously (an endpoint's registration):
   * null means the endpoint is not registered (2020).
   */
  resolve?: () => Promise<RoutedTarget | null>;
  /**
   * Where to try in turn instead of `target` (a number's carriers and their gateways): looked
   * up before the media opens; no attempt at all ends the leg with the plan's `none`.
   */
  plan?: () => Promise<AttemptPlan>;
  /**
   * Waits until the call may be placed (the account's calls per second) and decides whether it
   * may (its concurrent calls): null to dial, or the end the leg has instead. The leg is queued
   * (no INVITE) meanwhile.
   */
  admission?: () => Promise<LegEnd | null>;
  /** SDES-SRTP for this call (a trunk's policy); a resolved endpoint's own policy wins. */
  srtp?: SrtpPolicy;
}

/** One INVITE of a leg: where it goes and as whom. */
export interface DialAttempt {
  target: string;
  to?: string;
  from: string;
  destination?: Destination;
  routeSet?: readonly string[];
  credentials?: DigestCredentials;
  /** The codecs offered in this INVITE, when they are not the default. */
  codecs?: readonly AudioCodec[];
}

/**
 * Several INVITEs tried in turn for one leg (a number's carriers and their gateways), over one
 * media session, until one answers or `judge` says the failure is the call's answer.
 */
export interface AttemptPlan {
  attempts: readonly DialAttempt[];
  /** How the leg ends when there is no attempt at all. */
  none: LegEnd;
  /** How long an attempt has to respond at all (a 100 Trying is enough). */
  responseTimeoutMs: number;
  /** How long an attempt other than the last may ring; 0: no limit. */
  answerTimeoutMs: number;
  /**
   * After a failed attempt (a SIP failure, or why it was given up): whether the next is
   * tried, and the leg's end if not (or if none is left).
   */
  judge(attempt: DialAttempt, failure: InviteFailure | string, last: boolean): AttemptVerdict;
  /** Whether an attempt is left out after all (its carrier refused our credentials). */
  skips(attempt: DialAttempt): boolean;
}

export interface AttemptVerdict {
  next: boolean;
  end: LegEnd;
}

/** Where a dialled SIP URI is reached: its Request-URI, and how the INVITE gets there. */
export interface RoutedTarget {
  target: string;
  destination?: Destination;
  routeSet?: readonly string[];
  /** The target is a browser (it registered over WS or WSS): the offer is WebRTC's. */
  webrtc?: boolean;
  /** The endpoint's SRTP policy. */
  srtp?: SrtpPolicy;
  /** More registrations of the user, rung at the same time with the same offer. */
  others?: readonly Pick<RoutedTarget, 'target' | 'destination' | 'routeSet'>[];
  /**
   * The user's registrations of the other media kind (a browser beside a plain RTP phone, or
   * the other way round), rung at the same time with an offer of their own (see twoKinds).
   */
  otherKind?: readonly Pick<RoutedTarget, 'target' | 'destination' | 'routeSet'>[];
  /**
   * Where the client (registered over a connection) whose Contact is `contact` is reachable
   * now: its connection once it connected again; null to keep the dialog's.
   */
  reach?: (contact: string) => Promise<Destination | null>;
}

/**
 * A leg we place: the media session opens first (its port goes in the offer), then the
 * INVITE; provisional responses ring (183 with SDP starts early media), the 2xx answers, a
 * failure ends the leg with the cause the SIP outcome maps to.
 */
export class OutboundLeg extends CallLeg {
  /** The INVITE that answered, or the one ringing (the first of several ringing at once). */
  private invite: OutgoingInvite | null = null;
  /** The INVITEs ringing the user's registrations at once, while they ring. */
  private forks: OutgoingInvite[] = [];
  private ringTimer: TimerHandle | null = null;
  private pendingEnd: LegEnd | null = null;

  private constructor(
    env: LegEnvironment,
    private readonly options: DialOptions,
  ) {
    super(env, options.uuid, 'outbound');
  }

  /** Starts dialling; the leg reports through `events` and settles `ended` once. */
  static dial(env: LegEnvironment, options: DialOptions, events: LegEvents = {}): OutboundLeg {
    const leg = new OutboundLeg(env, options);
    leg.events = events;
    leg.start().catch((error: Error) => {
      env.log.warn({ err: error, callUuid: leg.uuid }, 'outbound call could not start');
      leg.finish({
        cause: hangupCause('Internal Error'),
        source: 'Error',
        status: 'failed',
        reason: `the call could not start: ${error.message}`,
      });
    });
    return leg;
  }

  get inviteSent(): boolean {
    return this.invite !== null;
  }

  /** Whether the far end has responded to the INVITE at all (a 100 Trying is enough). */
  get responded(): boolean {
    return this.forks.some((invite) => invite.responded) || (this.invite?.responded ?? false);
  }

  /** The SIP failure the INVITE ended with, once it has (null while it runs or if answered). */
  failure: InviteFailure | null = null;

  async hangup(end: LegEnd): Promise<void> {
    if (this.isOver) return;
    if (this.state === 'answered') {
      this.finish(end);
      await this.dialog?.bye().catch(() => null);
      return;
    }
    // Before the answer: CANCEL (held by the stack until a provisional arrives); the leg
    // ends with our cause when the INVITE's final response comes.
    this.pendingEnd = end;
    if (this.forks.length > 0) for (const invite of this.forks) invite.cancel();
    else if (this.invite) this.invite.cancel();
    else this.finish(end);
  }

  private async start(): Promise<void> {
    if (this.options.admission) {
      const refused = await this.options.admission();
      if (refused || this.pendingEnd) return this.finish(refused ?? this.pendingEnd!);
    }
    const { options } = this;
    let first: DialAttempt = {
      target: options.target,
      to: options.to,
      from: options.from,
      destination: options.destination,
      routeSet: options.routeSet,
      credentials: options.credentials,
    };
    let webrtc = false;
    let srtp = options.srtp;
    // The user's other registrations, rung with the first.
    let others: DialAttempt[] = [];
    // Its registrations of the other media kind (a browser beside a desk phone), and theirs.
    let otherKind: { attempts: DialAttempt[]; webrtc: boolean } | null = null;
    if (options.resolve) {
      const resolved = await options.resolve();
      if (resolved === null) {
        return this.finish({
          cause: hangupCause('Endpoint Not Registered'),
          source: 'Service',
          status: 'failed',
        });
      }
      const { target, destination, routeSet } = resolved;
      first = { ...first, target, destination, routeSet };
      this.reachPeer = resolved.reach ?? null;
      const attemptAt = (other: Pick<RoutedTarget, 'target' | 'destination' | 'routeSet'>) => ({
        ...first,
        target: other.target,
        destination: other.destination,
        routeSet: other.routeSet,
      });
      others = (resolved.others ?? []).map(attemptAt);
      srtp = resolved.srtp ?? srtp;
      // A browser, or an endpoint whose phone takes WebRTC's media (srtp: dtls).
      webrtc = (resolved.webrtc ?? false) || srtp === 'dtls';
      if (resolved.otherKind) {
        otherKind = {
          attempts: resolved.otherKind.map(attemptAt),
          webrtc: !(resolved.webrtc ?? false) || srtp === 'dtls',
        };
      }
    }
    const plan = options.plan ? await options.plan() : null;
    if (plan && plan.attempts.length === 0) return this.finish(this.pendingEnd ?? plan.none);
    if (this.pendingEnd) return this.finish(this.pendingEnd);
    if (otherKind?.webrtc === webrtc) others.push(...otherKind.attempts);
    const sdes = webrtc
      ? null
      : legSdes(srtp, reachedOverTls(first.target, first.destination?.protocol));
    if (sdes !== null && typeof sdes === 'object') {
      this.mediaProblem = sdes.refuse;
      return this.finish({
        cause: hangupCause('Network Error'),
        source: 'Error',
        status: 'failed',
        reason: sdes.refuse,
      });
    }
    if (sdes !== null) {
      // The offer carries SDES keys, which go over TLS only (RFC 4568 8.3): the user's other
      // registrations reached in the clear are not rung with it.
      others = others.filter((o) => reachedOverTls(o.target, o.destination?.protocol));
    }
    const kinds =
      otherKind && otherKind.webrtc !== webrtc ? this.twoKinds(otherKind, srtp, sdes) : null;
    const opened = await this.openMedia(options.near, webrtc || kinds !== null, sdes);
    if (this.pendingEnd || this.isOver) return this.finish(this.pendingEnd ?? this.result!);
    this.startRingTimer();
    try {
      // With two kinds, the browsers get the session's WebRTC offer and the phones a plain one.
      const leading = [first, ...others];
      const [browsers, phones] =
        kinds === null ? [leading, []] : webrtc ? [leading, kinds] : [kinds, leading];
      const plain = phones.length > 0 ? this.plainSdp(opened) : null;
      const forks = [
        ...browsers.map((attempt) => ({ attempt, sdp: this.sdp! })),
        ...phones.map((attempt) => ({ attempt, sdp: plain! })),
      ];
      if (!plan && forks.length > 1) await this.ringAll(forks);
      else await this.attempts(plan ? plan.attempts : [first], plan);
    } finally {
      this.ringTimer?.cancel();
    }
  }

  /**
   * A user's registrations of the other media kind, when one offer cannot ring them with the
   * rest: both kinds are rung over one media session opened for WebRTC, the plain RTP phones
   * with an offer of their own on its port, and whichever answers settles what the session
   * is. Left out (null: only the first kind rings) when the gateway cannot do WebRTC, or when
   * the first kind's offer carries SDES keys, which a WebRTC session cannot hold; plain phones
   * among the others that would need SDES are left out alone.
   */
  private twoKinds(
    otherKind: { attempts: DialAttempt[]; webrtc: boolean },
    srtp: SrtpPolicy | undefined,
    sdes: 'required' | 'optional' | null,
  ): DialAttempt[] | null {
    if (sdes !== null || !this.webrtcAvailable) return null;
    const rung = otherKind.webrtc
      ? otherKind.attempts
      : otherKind.attempts.filter(
          (o) => legSdes(srtp, reachedOverTls(o.target, o.destination?.protocol)) === null,
        );
    return rung.length > 0 ? rung : null;
  }

  /** Sends the INVITEs in turn until one answers, or the plan says the failure is the end. */
  private async attempts(attempts: readonly DialAttempt[], plan: AttemptPlan | null) {
    let end: LegEnd | null = null;
    for (const [index, attempt] of attempts.entries()) {
      if (plan?.skips(attempt)) continue;
      const last = attempts.slice(index + 1).every((next) => plan?.skips(next) ?? true);
      const tried = await this.tryAttempt(attempt, plan, last);
      if (tried.answered) return this.connected(tried.outcome);
      if (this.pendingEnd) return this.finish(this.pendingEnd);
      this.failure = tried.failure;
      if (!plan) return this.finish(endOfFailedInvite(tried.failure, !!attempt.credentials));
      const verdict = plan.judge(attempt, tried.gaveUp ?? tried.failure, last);
      if (!verdict.next) return this.finish(verdict.end);
      end = verdict.end;
    }
    this.finish(end ?? plan!.none);
  }

  private startRingTimer(): void {
    const seconds = this.options.ringTimeoutSeconds;
    if (seconds === undefined) return;
    this.ringTimer = this.env.scheduler.after(seconds * 1000, () => {
      if (this.state !== 'answered' && !this.isOver) {
        void this.hangup({
          cause: hangupCause('Ring Timeout Reached'),
          source: 'Service',
          status: 'no-answer',
        });
      }
    });
  }

  /**
   * One INVITE. With a plan, an attempt that does not respond within its response timeout, or
   * answer within its answer timeout (not the last attempt's), is cancelled and `gaveUp` says
   * why.
   */
  private async tryAttempt(
    attempt: DialAttempt,
    plan: AttemptPlan | null,
    last: boolean,
  ): Promise<
    | { answered: true; outcome: Extract<InviteOutcome, { answered: true }> }
    | { answered: false; failure: InviteFailure; gaveUp: string | null }
  > {
    const offer = this.sdp!.createOffer(attempt.codecs ? { codecs: attempt.codecs } : {});
    const invite = this.send(attempt, offer, (sdp) => this.progress(sdp));
    this.invite = invite;
    let gaveUp: string | null = null;
    const giveUp = (reason: string) => {
      gaveUp = reason;
      invite.cancel();
    };
    const { scheduler } = this.env;
    const timers = plan
      ? [
          scheduler.after(plan.responseTimeoutMs, () => {
            if (!invite.responded) giveUp(`no response in ${plan.responseTimeoutMs} ms`);
          }),
          ...(plan.answerTimeoutMs > 0 && !last
            ? [
                scheduler.after(plan.answerTimeoutMs, () =>
                  giveUp(`no answer in ${plan.answerTimeoutMs} ms`),
                ),
              ]
            : []),
        ]
      : [];
    const outcome = await invite.outcome;
    for (const timer of timers) timer.cancel();
    if (outcome.answered) return { answered: true, outcome };
    return { answered: false, failure: outcome.failure, gaveUp };
  }

  private send(
    attempt: DialAttempt,
    offer: string,
    onProgress: (sdp: string | null) => void,
  ): OutgoingInvite {
    return this.env.sip.invites.invite({
      target: attempt.target,
      destination: attempt.destination,
      routeSet: attempt.routeSet,
      to: attempt.to,
      from: attempt.from,
      fromDisplayName: this.options.fromDisplayName,
      sdp: offer,
      headers: this.options.headers,
      credentials: attempt.credentials,
      callId: undefined,
      delegate: { onProgress: (progress) => onProgress(progress.sdp) },
    });
  }

  /**
   * Rings every registration of the user at once (tabs, devices) with one offer, as a forking
   * proxy would (RFC 3261 16.6): the first to answer is the call and the others are cancelled;
   * one that answers in the same moment gets a BYE (13.2.2.4). Early media comes from a fork
   * that sends some, the first while it rings. A 6xx is a refusal for every device (16.7): the
   * others are cancelled at once. When all fail, the leg ends as the best of their failures
   * says. A fork that cannot even be sent (its Contact is no SIP URI) fails alone.
   *
   * Each fork carries the offer of its SDP session: the user's plain RTP phones rung beside
   * its browsers have one of their own on the same port (see twoKinds), which becomes the
   * leg's when one of them answers. Their early media is not heard (the port is WebRTC's
   * until then).
   */
  private async ringAll(forks: readonly { attempt: DialAttempt; sdp: SdpSession }[]) {
    const offered = this.sdp!;
    const offers = new Map<SdpSession, string>();
    for (const { sdp } of forks) if (!offers.has(sdp)) offers.set(sdp, sdp.createOffer());
    let earlyFrom: OutgoingInvite | null = null;
    const failures: InviteFailure[] = [];
    const invites: OutgoingInvite[] = [];
    const sdpOf = new Map<OutgoingInvite, SdpSession>();
    for (const { attempt, sdp: session } of forks) {
      try {
        const invite = this.send(attempt, offers.get(session)!, (sdp) => {
          if (sdp !== null && session === offered) earlyFrom ??= invite;
          this.progress(earlyFrom === invite ? sdp : null);
        });
        invites.push(invite);
        sdpOf.set(invite, session);
      } catch (error) {
        const reason = `${attempt.target} cannot be called: ${(error as Error).message}`;
        failures.push({ kind: 'transport', status: 503, reason, error: error as Error });
      }
    }
    this.forks = invites;
    this.invite = invites[0] ?? null;
    const result = await new Promise<
      | { answered: true; outcome: Extract<InviteOutcome, { answered: true }> }
      | { answered: false; failure: InviteFailure }
    >((resolve) => {
      let settled = false;
      let declined = false;
      const running = new Set(invites);
      let silenceWatch: TimerHandle | null = null;
      const cancelOthers = (kept: OutgoingInvite | null) => {
        for (const other of invites) if (other !== kept) other.cancel();
      };
      const failed = (failure: InviteFailure, from: OutgoingInvite | null = null) => {
        if (from) running.delete(from);
        failures.push(failure);
        if (failure.status >= 600 && !declined) {
          declined = true;
          cancelOthers(null);
        }
        if (settled) return;
        if (failures.length === forks.length) {
          settled = true;
          silenceWatch?.cancel();
          resolve({ answered: false, failure: bestFailure(failures) });
        } else if (silenceWatch === null && [...running].every((i) => !i.responded)) {
          // Every fork that responded at all has failed, and the rest have said nothing (a
          // connection gone half-open): they are given up soon, not when Timer B fires.
          silenceWatch = this.env.scheduler.after(FORK_SILENCE_MS, () => {
            for (const silent of running) if (!silent.responded) silent.cancel();
          });
        }
      };
      if (invites.length === 0) {
        settled = true;
        resolve({ answered: false, failure: bestFailure(failures) });
      }
      for (const invite of invites) {
        void invite.outcome.then((outcome) => {
          if (earlyFrom === invite && !outcome.answered) earlyFrom = null;
          if (!outcome.answered) return failed(outcome.failure, invite);
          if (settled || declined) {
            // Answered as the others were cancelled, or after a decline: it is not the call.
            void invite.hangup().catch(() => undefined);
            if (!settled)
              failed(
                { kind: 'cancelled', status: 487, reason: 'Declined elsewhere', response: null },
                invite,
              );
            return;
          }
          settled = true;
          silenceWatch?.cancel();
          this.invite = invite;
          cancelOthers(invite);
          const answeredWith = sdpOf.get(invite)!;
          if (answeredWith !== offered) this.answeredPlain(answeredWith);
          resolve({ answered: true, outcome });
        });
      }
    });
    this.forks = [];
    if (result.answered) return this.connected(result.outcome);
    if (this.pendingEnd) return this.finish(this.pendingEnd);
    this.failure = result.failure;
    this.finish(endOfFailedInvite(result.failure, !!forks[0]!.attempt.credentials));
  }

  /** A provisional response: early media when it carries SDP, and ringing. */
  private progress(sdp: string | null): void {
    if (sdp) {
      try {
        const reading = this.sdp!.readAnswer(sdp, { early: true });
        if (reading.ok) {
          this.applyAudio(reading.audio).catch((error: Error) =>
            this.env.log.warn({ err: error, callUuid: this.uuid }, 'early media not applied'),
          );
          this.state = 'early';
          this.events.onEarlyMedia?.();
        }
      } catch (error) {
        this.env.log.warn({ err: error, callUuid: this.uuid }, 'bad early media SDP');
      }
    }
    this.ringing();
  }

  private async connected(outcome: Extract<InviteOutcome, { answered: true }>): Promise<void> {
    this.ringTimer?.cancel();
    if (this.pendingEnd) {
      // Answered as our CANCEL crossed it: the stack ACKs and BYEs; the leg ends as asked.
      return this.finish(this.pendingEnd);
    }
    // Watched at once: a BYE or an INFO can come right behind the 2xx, while its audio is
    // still being applied.
    this.watchDialog(outcome.dialog, 'Callee');
    const sdp = outcome.sdp;
    if (sdp) {
      try {
        const reading = this.sdp!.readAnswer(sdp);
        if (!reading.ok) {
          await this.hangUpAnswered(`the answer's audio was refused: ${reading.reason}`);
          return;
        }
        // Not waited for: commands to one worker run in order, so what the answer starts (a
        // play, a bridge) finds this audio applied. A failure drops the call.
        this.applyAudio(reading.audio).catch(async (error: Error) => {
          if (!this.isOver) {
            await this.hangUpAnswered(`the answer's audio could not be applied: ${error.message}`);
          }
        });
      } catch (error) {
        await this.hangUpAnswered(`the answer's SDP is unusable: ${(error as Error).message}`);
        return;
      }
    } else if (this.sdp!.current === null) {
      await this.hangUpAnswered('the 2xx carried no SDP answer');
      return;
    }
    if (this.isOver) return;
    this.answered();
  }

  /** Why an answer was unusable (its SDP), when that ended the leg. */
  mediaProblem: string | null = null;

  private async hangUpAnswered(reason: string): Promise<void> {
    this.mediaProblem = reason;
    this.env.log.warn({ callUuid: this.uuid, reason }, 'answered call dropped');
    this.finish({ cause: hangupCause('Network Error'), source: 'Error', status: 'failed' });
    await this.invite?.hangup().catch(() => undefined);
  }
}

/**
 * How long the registrations still ringing may stay silent (not even a 100 Trying) once every
 * one that responded has failed: a live client responds at once, and one that has not in this
 * long sits behind a dead connection.
 */
const FORK_SILENCE_MS = 4000;

/**
 * The failure that speaks for several INVITEs ringing at once (RFC 3261 16.7 6): a 6xx over
 * anything, else the lowest class, the first to come among equals; our own cancellations
 * count only when nothing else came.
 */
function bestFailure(failures: readonly InviteFailure[]): InviteFailure {
  const declined = failures.find((f) => f.status >= 600);
  if (declined) return declined;
  const theirs = failures.filter((f) => f.kind !== 'cancelled');
  const pool = theirs.length > 0 ? theirs : failures;
  return pool.reduce((best, f) =>
    Math.floor(f.status / 100) < Math.floor(best.status / 100) ? f : best,
  );
}
