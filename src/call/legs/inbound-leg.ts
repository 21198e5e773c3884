import type { IncomingInvite } from '../../sip/ua/incoming-invite.js';
import { SdpParseError } from '../../sip/sdp/index.js';
import { hangupCause } from '../hangup-causes.js';
import { legSdes, offersSdes, SDES_IN_THE_CLEAR, type SrtpPolicy } from '../srtp-policy.js';
import { offersWebrtc } from '../webrtc-support.js';
import { CallLeg, WebrtcUnavailable, type LegEnvironment } from './call-leg.js';
import type { LegEnd } from './leg-end.js';

/** The SIP final response that a cause turns into when an unanswered inbound call is refused. */
function rejectionStatus(end: LegEnd): number {
  if (end.cause.name === 'Busy Line') return 486;
  if (end.cause.name === 'Rejected') return 603;
  if (end.cause.name === 'Endpoint Not Registered') return 480;
  if (end.cause.name === 'Unallocated number') return 404;
  if (end.cause.name === 'Forbidden') return 403;
  return 480;
}

/**
 * A leg that called us: its offer is answered from a media session opened for it; it rings,
 * may take early media (183), is answered (200, confirmed by the ACK), or is refused. A
 * CANCEL from the caller ends it as 1000 Canceled.
 */
export class InboundLeg extends CallLeg {
  private answerSdp: string | null = null;

  constructor(
    env: LegEnvironment,
    uuid: string,
    readonly invite: IncomingInvite,
  ) {
    super(env, uuid, 'inbound');
    invite.delegate = {
      onCancelled: () =>
        this.finish({ cause: hangupCause('Canceled'), source: 'Caller', status: 'no-answer' }),
      onFailed: () =>
        this.finish({ cause: hangupCause('Network Error'), source: 'Error', status: 'failed' }),
    };
  }

  /**
   * Opens media and answers the SDP offer (without sending it yet). False when the offer is
   * unusable: the INVITE has then been refused (488 or 400) and the leg has ended.
   */
  async prepare(srtp?: SrtpPolicy): Promise<boolean> {
    if (this.isOver) return false;
    const offer = this.invite.offer;
    if (offer === null) {
      return this.refuse(488, 'An SDP offer is required');
    }
    const overTls = this.invite.flow.protocol === 'TLS';
    // RFC 4568 8.3: keys in the SDP are only as safe as the signalling; over a transport in
    // the clear anyone on the path has them, so the offer is refused, not answered with SRTP.
    if (!overTls && offersSdes(offer)) return this.refuse(488, SDES_IN_THE_CLEAR, true);
    const sdes = legSdes(srtp, overTls);
    if (sdes !== null && typeof sdes === 'object') return this.refuse(488, sdes.refuse, true);
    try {
      await this.openMedia(undefined, offersWebrtc(offer), sdes);
    } catch (error) {
      if (error instanceof WebrtcUnavailable) return this.refuse(488, error.message);
      throw error;
    }
    if (this.isOver) return false;
    try {
      const outcome = this.sdp!.answer(offer);
      if (!outcome.ok) return this.refuse(488, outcome.reason);
      this.answerSdp = outcome.sdp;
      // Not waited for: commands to one worker run in order, so what follows (a play, a
      // bridge) finds this audio applied. A failure ends the leg.
      this.applyAudio(outcome.audio).catch((error: Error) => {
        this.env.log.warn({ err: error, callUuid: this.uuid }, "the offer's audio not applied");
        void this.hangup({
          cause: hangupCause('Internal Error'),
          source: 'Error',
          status: 'failed',
          sipStatus: 500,
          reason: `the offer's audio was not applied: ${error.message}`,
        });
      });
      return !this.isOver;
    } catch (error) {
      if (error instanceof SdpParseError) return this.refuse(400, error.message.slice(0, 100));
      throw error;
    }
  }

  ring(): void {
    if (this.isOver || this.state !== 'setup') return;
    this.invite.ring();
    this.ringing();
  }

  /** 183 Session Progress with our SDP: audio flows both ways before the answer. */
  earlyMedia(): void {
    if (this.isOver || this.state === 'answered' || this.state === 'early') return;
    this.invite.progress(this.answerSdp!);
    this.ringing();
    this.state = 'early';
    this.events.onEarlyMedia?.();
  }

  answer(): void {
    if (this.isOver || this.state === 'answered') return;
    const dialog = this.invite.answer(this.answerSdp!);
    this.watchDialog(dialog, 'Caller');
    this.answered();
  }

  async hangup(end: LegEnd): Promise<void> {
    if (this.isOver) return;
    if (this.state === 'answered') {
      this.finish(end);
      await this.dialog?.bye().catch(() => null);
      return;
    }
    this.finish(end);
    const state = this.invite.state;
    if (state === 'received' || state === 'early')
      this.invite.reject(end.sipStatus ?? rejectionStatus(end));
  }

  /** Refuses the INVITE; `warn` repeats the reason in a Warning header (RFC 3261 20.43). */
  private refuse(status: number, reason: string, warn = false): false {
    const state = this.invite.state;
    const warning: [string, string][] = warn
      ? [['Warning', `399 ${this.env.publicHost} "${reason.replace(/["\\]/g, '')}"`]]
      : [];
    if (state === 'received' || state === 'early') this.invite.reject(status, reason, warning);
    this.finish({ cause: hangupCause('Network Error'), source: 'Error', status: 'failed' });
    return false;
  }
}
