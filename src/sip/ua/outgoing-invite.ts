import type { TimerHandle } from '../../core/scheduler.js';
import { Dialog } from '../dialog/dialog.js';
import type { DialogLayer } from '../dialog/dialog-layer.js';
import { sdpOf } from '../dialog/session-body.js';
import { SipRequest, type SipResponse, parseMessage } from '../message/index.js';
import { reasonPhrase } from '../transaction/response-to.js';
import type { ClientTransaction } from '../transaction/transaction-layer.js';
import type { Destination } from '../transport/transport-layer.js';
import { answerChallenge, type DigestCredentials } from '../auth/challenge-answer.js';

/** A 1xx other than 100 (180 Ringing, 183 Session Progress with early media...). */
export interface InviteProgress {
  status: number;
  reason: string;
  /** Early media SDP, when the response carries one. */
  sdp: string | null;
  /** The early dialog the response made, when it had a To tag. */
  dialog: Dialog | null;
  response: SipResponse;
}

/** The call was answered: the dialog is confirmed and the 2xx acknowledged. */
export interface InviteAnswer {
  dialog: Dialog;
  sdp: string | null;
  response: SipResponse;
}

/** Why a call was not answered. Every kind carries a SIP status and reason. */
export type InviteFailure =
  /** A final 3xx-6xx from the far end (or a proxy). */
  | { kind: 'rejected'; status: number; reason: string; response: SipResponse }
  /** Credentials were given and refused: challenged again after answering a challenge. */
  | { kind: 'auth-failed'; status: number; reason: string; response: SipResponse }
  /** cancel() was called; `response` is the INVITE's final response, when one came. */
  | { kind: 'cancelled'; status: 487; reason: string; response: SipResponse | null }
  /** RFC 3261 8.1.3.1: no final response in time (Timer B) counts as a 408. */
  | { kind: 'timeout'; status: 408; reason: string }
  /** RFC 3261 8.1.3.1: the request could not be sent (or its target resolved): a 503. */
  | { kind: 'transport'; status: 503; reason: string; error: Error };

/**
 * How the INVITE ended. An answered outcome leaves out the 2xx itself (onAnswered has it): the
 * outcome lives as long as the INVITE transaction, 32 s after the answer, and a parsed 2xx is
 * a few KB per call for that long.
 */
export type InviteOutcome =
  | ({ answered: true } & Omit<InviteAnswer, 'response'>)
  | { answered: false; failure: InviteFailure };

/** What an outgoing INVITE tells its owner; each event comes at most once, except progress. */
export interface OutgoingInviteDelegate {
  onProgress?(progress: InviteProgress): void;
  onAnswered?(answer: InviteAnswer): void;
  onFailed?(failure: InviteFailure): void;
}

export interface OutgoingInviteOptions {
  /** The Request-URI: a sip: or sips: URI. */
  target: string;
  /** The To URI (the target when left out) and its display name. */
  to?: string;
  toDisplayName?: string;
  /** The From URI and its display name; the tag is ours. */
  from: string;
  fromDisplayName?: string;
  /** The SDP offer. */
  sdp: string;
  /** More headers (X- headers, P-Asserted-Identity, Route...); not the ones the UAC writes. */
  headers?: Iterable<readonly [string, string]>;
  /** A Call-ID of our choosing (a fresh one otherwise). */
  callId?: string;
  /** Answers one 401/407 digest challenge with these (RFC 3261 22.2). */
  credentials?: DigestCredentials;
  /** Where to send the INVITE (an outbound proxy, a trunk) instead of the target's host. */
  destination?: Destination;
  /**
   * A pre-loaded route set (RFC 3261 8.1.2), as Route values: the INVITE goes to the first
   * one's URI (unless `destination` says otherwise) and carries them all. A registered
   * client's Path (RFC 3327) is one.
   */
  routeSet?: readonly string[];
  /** The user part of our Contact. */
  contactUser?: string;
  delegate?: OutgoingInviteDelegate;
}

export type OutgoingInviteState = 'resolving' | 'calling' | 'proceeding' | 'answered' | 'failed';

const MOVES: Readonly<Record<OutgoingInviteState, readonly OutgoingInviteState[]>> = {
  resolving: ['calling', 'failed'],
  calling: ['proceeding', 'answered', 'failed'],
  // An INVITE answered 401/407 is sent again with credentials and waits for a 1xx again.
  proceeding: ['calling', 'answered', 'failed'],
  answered: [],
  failed: [],
};

/** What the InviteClient hands each call: the INVITE's fixed parts and where it goes. */
export interface InviteSetup {
  layer: DialogLayer;
  /** Where the INVITE goes, and how to build it: attempt 0, then 1 after a challenge... */
  destination: Promise<{ destination: Destination; build: (attempt: number) => SipRequest }>;
  delegate: OutgoingInviteDelegate;
  credentials?: DigestCredentials;
}

/**
 * One outgoing call, RFC 3261 13.2 as the UAC: the INVITE, its provisional responses and early
 * dialogs, the 2xx (ACKed, and ACKed again when retransmitted), failures, digest challenges
 * answered once, and CANCEL as 9.1 allows it. `outcome` settles once, never rejecting.
 */
export class OutgoingInvite {
  readonly outcome: Promise<InviteOutcome>;
  delegate: OutgoingInviteDelegate;
  /** The confirmed dialog, once answered. */
  dialog: Dialog | null = null;
  private current: OutgoingInviteState = 'resolving';
  private settle!: (outcome: InviteOutcome) => void;
  /** The INVITE last sent; once the call is over, only its bytes (see release). */
  private invite: SipRequest | null = null;
  private inviteBytes: Buffer | null = null;
  /** Counts INVITEs sent, so that responses to an earlier one (before a challenge) are ignored. */
  private sent = 0;
  private transaction: ClientTransaction | null = null;
  private destination: Destination | null = null;
  private build: ((attempt: number) => SipRequest) | null = null;
  private provisional = false;
  private lastProvisional: SipResponse | null = null;
  private cancelRequested = false;
  private cancelSent = false;
  private cancelTimer: TimerHandle | null = null;
  private authAttempts = 0;
  private readonly early = new Map<string, Dialog>();
  /** Dialogs of 2xx we did not want (a second fork, after a CANCEL): ACKed and BYE'd. */
  private readonly unwanted = new Map<string, Dialog>();
  private readonly layer: DialogLayer;
  private readonly credentials: InviteSetup['credentials'];

  constructor(setup: InviteSetup) {
    this.layer = setup.layer;
    this.credentials = setup.credentials;
    this.delegate = setup.delegate;
    this.outcome = new Promise((resolve) => (this.settle = resolve));
    setup.destination.then(
      (ready) => this.start(ready.destination, ready.build),
      (error: Error) => this.fail({ kind: 'transport', status: 503, reason: error.message, error }),
    );
  }

  get state(): OutgoingInviteState {
    return this.current;
  }

  /** Whether the far end has answered the INVITE at all (a 100 Trying is enough). */
  get responded(): boolean {
    return (
      this.provisional ||
      this.authAttempts > 0 ||
      this.current === 'answered' ||
      (this.current === 'failed' && !this.cancelRequested)
    );
  }

  /** The INVITE last sent (the one with credentials after a challenge). */
  get request(): SipRequest | null {
    return this.invite || this.inviteBytes ? this.lastInvite() : null;
  }

  /**
   * Gives up the call before it is answered (RFC 3261 9.1): a CANCEL once a provisional
   * response has come, not before; the outcome is then a 'cancelled' failure. A 2xx that
   * crosses the CANCEL is acknowledged and the dialog ended with a BYE.
   */
  cancel(): void {
    if (this.current === 'answered' || this.current === 'failed' || this.cancelRequested) return;
    this.cancelRequested = true;
    if (this.current === 'resolving') {
      this.fail({ kind: 'cancelled', status: 487, reason: reasonPhrase(487), response: null });
      return;
    }
    if (this.provisional) {
      this.sendCancel();
      return;
    }
    // RFC 3261 9.1: "If no provisional response has been received, the CANCEL request MUST
    // NOT be sent; rather, the client MUST wait for the arrival of a provisional response".
    // The INVITE waits (a 1xx gets the CANCEL, a 2xx its ACK and a BYE), but the owner does
    // not: the call is over for it now, not when Timer B fires 32 s later.
    this.fail({ kind: 'cancelled', status: 487, reason: reasonPhrase(487), response: null });
  }

  /** Ends the call whatever its state: BYE when answered, CANCEL before. */
  async hangup(): Promise<void> {
    if (this.dialog) await this.dialog.bye();
    else this.cancel();
  }

  private start(destination: Destination, build: (attempt: number) => SipRequest): void {
    if (this.current !== 'resolving') return; // cancelled meanwhile
    this.destination = destination;
    this.build = build;
    this.invite = build(0);
    this.transition('calling');
    this.send();
  }

  private send(): void {
    const attempt = ++this.sent;
    this.provisional = false;
    try {
      this.transaction = this.layer.sendRequest(this.invite!, this.destination!, {
        onResponse: (response) => {
          if (attempt === this.sent) this.receive(response);
        },
        onTimeout: () => {
          if (attempt === this.sent)
            this.finish({ kind: 'timeout', status: 408, reason: 'Request Timeout' });
        },
        onTransportError: (error) => {
          if (attempt === this.sent) this.transportFailed(error);
        },
      });
    } catch (error) {
      this.transportFailed(error as Error);
    }
  }

  private receive(response: SipResponse): void {
    if (response.status < 200) this.provisionalArrived(response);
    else if (response.status < 300) this.answered(response);
    else this.rejected(response);
  }

  private provisionalArrived(response: SipResponse): void {
    if (this.current === 'failed' && this.cancelRequested && !this.cancelSent) {
      // Given up before any provisional response: the CANCEL can go now.
      this.provisional = true;
      this.sendCancel();
      return;
    }
    if (this.current !== 'calling' && this.current !== 'proceeding') return;
    this.provisional = true;
    if (this.current === 'calling') this.transition('proceeding');
    if (this.cancelRequested) {
      if (!this.cancelSent) this.sendCancel();
      return;
    }
    if (response.status === 100 || this.isRepeat(response)) return;
    const dialog = this.earlyDialog(response);
    const sdp = sdpOf(response);
    if (dialog && sdp !== null) dialog.remoteSdp = sdp;
    const progress = { status: response.status, reason: response.reason, sdp, dialog, response };
    this.layer.safely(() => this.delegate.onProgress?.(progress));
  }

  /**
   * A provisional response the same as the last one (status, To tag, body): the UAS sent it
   * again for a retransmitted INVITE (RFC 3261 17.2.1), so the owner has already heard it.
   */
  private isRepeat(response: SipResponse): boolean {
    const last = this.lastProvisional;
    this.lastProvisional = response;
    return (
      last !== null &&
      last.status === response.status &&
      last.to().tag === response.to().tag &&
      last.body.equals(response.body)
    );
  }

  /** RFC 3261 12.1.2: a 1xx with a To tag makes (or is in) an early dialog. */
  private earlyDialog(response: SipResponse): Dialog | null {
    const tag = response.to().tag;
    if (tag === null) return null;
    let dialog = this.early.get(tag);
    if (!dialog) {
      try {
        dialog = Dialog.forUac(this.invite!, response, this.destination!);
        dialog.credentials = this.credentials ?? null;
      } catch (error) {
        this.layer.warn(`a ${response.status} made no early dialog: ${(error as Error).message}`);
        return null;
      }
      dialog.localSdp = sdpOf(this.invite!);
      this.early.set(tag, dialog);
      this.layer.add(dialog);
    }
    return dialog;
  }

  private answered(response: SipResponse): void {
    const tag = response.to().tag ?? '';
    // RFC 3261 13.2.2.4: every retransmission of the 2xx gets the ACK again.
    const known = this.dialog?.remoteTag === tag ? this.dialog : this.unwanted.get(tag);
    if (known) {
      const ack = known.acks.get(response.cseq().seq);
      if (ack) this.layer.resendAck(known, ack);
      return;
    }
    // A 2xx from a second fork can come after the call is over, when only the bytes are left.
    const invite = this.lastInvite();
    const dialog = this.early.get(tag) ?? Dialog.forUac(invite, response, this.destination!);
    dialog.credentials = this.credentials ?? null;
    this.early.delete(tag);
    dialog.confirm(response);
    this.layer.add(dialog);
    this.layer.acknowledge(dialog, invite);
    const wanted = this.current === 'calling' || this.current === 'proceeding';
    if (!wanted || this.cancelRequested) {
      // RFC 3261 13.2.2.4 (a second 2xx) and 9.1 (a 2xx crossing our CANCEL): "the UAC core
      // MUST generate an ACK ... and then send a BYE".
      this.unwanted.set(tag, dialog);
      void dialog.bye();
      this.finish({ kind: 'cancelled', status: 487, reason: reasonPhrase(487), response });
      return;
    }
    this.dialog = dialog;
    dialog.localSdp = sdpOf(this.invite!);
    dialog.remoteSdp = sdpOf(response);
    this.endEarlyDialogs();
    this.clearCancelTimer();
    this.transition('answered');
    const answer = { dialog, sdp: dialog.remoteSdp, response };
    this.layer.safely(() => this.delegate.onAnswered?.(answer));
    this.settle({ answered: true, dialog, sdp: dialog.remoteSdp });
    this.release();
  }

  private rejected(response: SipResponse): void {
    if (this.current !== 'calling' && this.current !== 'proceeding') return;
    const challenged = response.status === 401 || response.status === 407;
    if (challenged && !this.cancelRequested && this.answerChallenge(response)) return;
    const { status, reason } = response;
    if (challenged && this.credentials) {
      this.finish({ kind: 'auth-failed', status, reason, response });
    } else {
      this.finish({ kind: 'rejected', status, reason, response });
    }
  }

  /**
   * RFC 3261 22.2: the INVITE again with credentials for the challenge: "the same Call-ID,
   * From and To tags" and a new CSeq (8.1.3.5). Only once, unless the second challenge says
   * the nonce was merely stale (RFC 7616 3.3). False when no credentials fit.
   */
  private answerChallenge(response: SipResponse): boolean {
    const credentials = this.credentials;
    if (!credentials) return false;
    const answer = answerChallenge(response, this.invite!, credentials);
    if (!answer || this.authAttempts >= (answer.stale ? 2 : 1)) return false;
    this.authAttempts++;
    const next = this.build!(this.authAttempts);
    next.headers.append(answer.header, answer.value);
    this.invite = next;
    if (this.current === 'proceeding') this.transition('calling');
    this.send();
    return true;
  }

  /** RFC 3261 9.1: the CANCEL of the INVITE, on its branch, to where the INVITE went. */
  private sendCancel(): void {
    this.cancelSent = true;
    // Given up before any 1xx, the call is over for its owner when the 1xx brings the CANCEL.
    const invite = this.lastInvite();
    const rows: [string, string][] = [
      ['Via', invite.headers.getRows('Via')[0]!],
      ['Max-Forwards', '70'],
      ['From', invite.headers.get('From')!],
      ['To', invite.headers.get('To')!],
      ['Call-ID', invite.callId()],
      ['CSeq', `${invite.cseq().seq} CANCEL`],
    ];
    for (const route of invite.headers.getRows('Route')) rows.push(['Route', route]);
    const cancel = new SipRequest({ method: 'CANCEL', uri: invite.uri, headers: rows });
    try {
      this.layer.sendRequest(cancel, this.destination!, { onResponse: () => {} });
    } catch (error) {
      this.layer.warn(`could not send a CANCEL: ${(error as Error).message}`);
    }
    // RFC 3261 9.1: without a final response to the INVITE in 64*T1 after the CANCEL, "the
    // client SHOULD then consider the original transaction cancelled and SHOULD destroy" it.
    this.cancelTimer = this.layer.scheduler.after(64 * this.layer.timers.t1, () => {
      this.transaction?.machine.terminate();
      this.finish({ kind: 'cancelled', status: 487, reason: reasonPhrase(487), response: null });
    });
  }

  private transportFailed(error: Error): void {
    this.finish({ kind: 'transport', status: 503, reason: error.message, error });
  }

  /** Ends the call unanswered; a call the owner cancelled always ends as 'cancelled'. */
  private finish(failure: InviteFailure): void {
    if (this.current !== 'calling' && this.current !== 'proceeding') return;
    if (this.cancelRequested && failure.kind !== 'cancelled') {
      const response = 'response' in failure ? failure.response : null;
      failure = { kind: 'cancelled', status: 487, reason: reasonPhrase(487), response };
    }
    this.fail(failure);
  }

  private fail(failure: InviteFailure): void {
    this.clearCancelTimer();
    this.endEarlyDialogs();
    this.transition('failed');
    this.layer.safely(() => this.delegate.onFailed?.(failure));
    this.settle({ answered: false, failure });
    this.release();
  }

  /**
   * Lets the owner go once the outcome is out: the INVITE transaction keeps this object until
   * its Timer M (32 s on UDP) to ACK 2xx retransmissions, and the owner (a call) should not
   * live as long.
   */
  private release(): void {
    this.delegate = {};
    // The INVITE is kept for a 2xx from another fork; as bytes it is a fraction of the parsed
    // request, and outside the JavaScript heap the collector marks.
    if (this.invite) {
      this.inviteBytes = this.invite.toBuffer();
      this.invite = null;
    }
    // The INVITE builder holds the options the owner gave, delegate and all; a retry after a
    // challenge is the only use for it, and none comes after the outcome.
    this.build = null;
    this.lastProvisional = null;
  }

  /** The INVITE last sent; once the outcome is out, read back from its bytes. */
  private lastInvite(): SipRequest {
    if (this.invite) return this.invite;
    const invite = parseMessage(this.inviteBytes!);
    if (!(invite instanceof SipRequest)) throw new Error('the INVITE bytes hold a response');
    return invite;
  }

  private endEarlyDialogs(): void {
    for (const dialog of this.early.values()) dialog.terminate({ kind: 'early-ended' });
    this.early.clear();
  }

  private clearCancelTimer(): void {
    this.cancelTimer?.cancel();
    this.cancelTimer = null;
  }

  private transition(to: OutgoingInviteState): void {
    if (!MOVES[this.current].includes(to)) {
      throw new Error(`outgoing INVITE: illegal state transition ${this.current} -> ${to}`);
    }
    this.current = to;
  }
}
