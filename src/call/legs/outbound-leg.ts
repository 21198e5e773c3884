import type { Destination } from '../../sip/transport/transport-layer.js';
import type { InviteFailure, OutgoingInvite } from '../../sip/ua/outgoing-invite.js';
import type { TimerHandle } from '../../core/scheduler.js';
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
  credentials?: { username: string; password: string };
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
   * Waits until the call may be placed (the account's calls per second) and decides whether it
   * may (its concurrent calls): null to dial, or the end the leg has instead. The leg is queued
   * (no INVITE) meanwhile.
   */
  admission?: () => Promise<LegEnd | null>;
  /** SDES-SRTP for this call (a trunk's policy); a resolved endpoint's own policy wins. */
  srtp?: SrtpPolicy;
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
}

/**
 * A leg we place: the media session opens first (its port goes in the offer), then the
 * INVITE; provisional responses ring (183 with SDP starts early media), the 2xx answers, a
 * failure ends the leg with the cause the SIP outcome maps to.
 */
export class OutboundLeg extends CallLeg {
  private invite: OutgoingInvite | null = null;
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
    return this.invite?.responded ?? false;
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
    if (this.invite) this.invite.cancel();
    else this.finish(end);
  }

  private async start(): Promise<void> {
    if (this.options.admission) {
      const refused = await this.options.admission();
      if (refused || this.pendingEnd) return this.finish(refused ?? this.pendingEnd!);
    }
    let { target, destination, routeSet } = this.options;
    let webrtc = false;
    let srtp = this.options.srtp;
    if (this.options.resolve) {
      const resolved = await this.options.resolve();
      if (resolved === null) {
        return this.finish({
          cause: hangupCause('Endpoint Not Registered'),
          source: 'Service',
          status: 'failed',
        });
      }
      ({ target, destination, routeSet } = resolved);
      srtp = resolved.srtp ?? srtp;
      // A browser, or an endpoint whose phone takes WebRTC's media (srtp: dtls).
      webrtc = (resolved.webrtc ?? false) || srtp === 'dtls';
    }
    if (this.pendingEnd) return this.finish(this.pendingEnd);
    const sdes = webrtc ? null : legSdes(srtp, reachedOverTls(target, destination?.protocol));
    if (sdes !== null && typeof sdes === 'object') {
      this.mediaProblem = sdes.refuse;
      return this.finish({
        cause: hangupCause('Network Error'),
        source: 'Error',
        status: 'failed',
        reason: sdes.refuse,
      });
    }
    await this.openMedia(this.options.near, webrtc, sdes);
    if (this.pendingEnd || this.isOver) return this.finish(this.pendingEnd ?? this.result!);
    const offer = this.sdp!.createOffer();
    const { options } = this;
    this.invite = this.env.sip.invites.invite({
      target,
      destination,
      routeSet,
      to: options.to,
      from: options.from,
      fromDisplayName: options.fromDisplayName,
      sdp: offer,
      headers: options.headers,
      credentials: options.credentials,
      callId: undefined,
      delegate: {
        onProgress: (progress) => {
          if (progress.sdp) {
            try {
              const reading = this.sdp!.readAnswer(progress.sdp, { early: true });
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
        },
      },
    });
    if (options.ringTimeoutSeconds !== undefined) {
      this.ringTimer = this.env.scheduler.after(options.ringTimeoutSeconds * 1000, () => {
        if (this.state !== 'answered' && !this.isOver) {
          void this.hangup({
            cause: hangupCause('Ring Timeout Reached'),
            source: 'Service',
            status: 'no-answer',
          });
        }
      });
    }
    const outcome = await this.invite.outcome;
    this.ringTimer?.cancel();
    if (!outcome.answered) {
      this.failure = outcome.failure;
      const end =
        this.pendingEnd ?? endOfFailedInvite(outcome.failure, options.credentials !== undefined);
      return this.finish(end);
    }
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
