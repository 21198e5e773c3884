import { Dialog } from '../dialog/dialog.js';
import type { DialogLayer } from '../dialog/dialog-layer.js';
import { SDP, sdpOf } from '../dialog/session-body.js';
import type { SipRequest, SipResponse } from '../message/index.js';
import { newTag, responseTo } from '../transaction/response-to.js';
import type { ServerTransaction } from '../transaction/transaction-layer.js';
import type { Address, Flow } from '../transport/flow.js';

export type IncomingInviteState =
  'received' | 'early' | 'answered' | 'confirmed' | 'rejected' | 'cancelled' | 'failed';

const MOVES: Readonly<Record<IncomingInviteState, readonly IncomingInviteState[]>> = {
  received: ['early', 'answered', 'rejected', 'cancelled'],
  early: ['answered', 'rejected', 'cancelled'],
  answered: ['confirmed', 'failed'],
  confirmed: [],
  rejected: [],
  cancelled: [],
  failed: [],
};

/** What an incoming INVITE tells its owner (the call layer). */
export interface IncomingInviteDelegate {
  /**
   * The caller gave up before our final response: a CANCEL (RFC 3261 9.2), or a BYE on the
   * early dialog (15). The INVITE has been answered 487.
   */
  onCancelled?(): void;
  /** The ACK of our 2xx arrived: the call is up. */
  onConfirmed?(ack: SipRequest): void;
  /** RFC 3261 13.3.1.4: no ACK came in 64*T1; a BYE was sent and the dialog has ended. */
  onFailed?(reason: 'no-ack'): void;
}

type Headers = Iterable<readonly [string, string]>;

/**
 * One INVITE received outside a dialog, RFC 3261 13.3 as the UAS: ring, early media, answer
 * (its 2xx retransmitted until the ACK), reject, or hang up; CANCEL answered 487. Every
 * response carries the same To tag; 1xx and 2xx make the dialog (12.1.1).
 */
export class IncomingInvite {
  delegate: IncomingInviteDelegate = {};
  /** The early dialog after ring() or progress(), the confirmed one after answer(). */
  dialog: Dialog | null = null;
  /** The SDP offer; null for an INVITE without one (answer() then makes the offer). */
  readonly offer: string | null;
  private readonly toTag = newTag();
  private current: IncomingInviteState = 'received';

  constructor(
    readonly request: SipRequest,
    readonly transaction: ServerTransaction,
    private readonly layer: DialogLayer,
    /** Our Contact URI on the transport the INVITE came on. */
    private readonly contact: string,
  ) {
    this.offer = sdpOf(request);
    layer.watchCancel(transaction, () => this.cancelled());
  }

  get state(): IncomingInviteState {
    return this.current;
  }

  /** The transport, addresses and connection the INVITE came on. */
  get flow(): Flow {
    return this.transaction.flow;
  }

  /** The address the INVITE came from. */
  get remote(): Address {
    return this.transaction.flow.remote;
  }

  /** 180 Ringing. */
  ring(headers?: Headers): void {
    this.provisional(180, undefined, headers);
  }

  /** 183 Session Progress with early media. */
  progress(sdp: string, headers?: Headers): void {
    this.provisional(183, sdp, headers);
  }

  /**
   * 200 with our SDP (the answer, or our offer when the INVITE had none). The 2xx is
   * retransmitted until the ACK; onConfirmed or onFailed follows. Returns the dialog.
   */
  answer(sdp: string, headers?: Headers): Dialog {
    this.expectUnanswered('answer');
    const response = this.response(200, sdp, headers);
    const dialog = this.dialogFor(response);
    dialog.confirm();
    dialog.localSdp = sdp;
    dialog.remoteSdp = this.offer;
    this.layer.unwatchCancel(this.transaction);
    this.transition('answered');
    this.layer.answerInvite(dialog, this.transaction, response, {
      onAck: (ack) => {
        if (this.offer === null) dialog.remoteSdp = sdpOf(ack);
        this.transition('confirmed');
        this.layer.safely(() => this.delegate.onConfirmed?.(ack));
        this.release();
      },
      onGiveUp: () => {
        this.transition('failed');
        this.layer.safely(() => this.delegate.onFailed?.('no-ack'));
        this.release();
      },
    });
    return dialog;
  }

  /** A final 3xx-6xx (486 Busy Here, 603 Decline, 404...). */
  reject(status: number, reason?: string, headers?: Headers): void {
    if (!Number.isInteger(status) || status < 300 || status > 699) {
      throw new TypeError(
        `Expected a status between 300 and 699 for reject but received ${status}`,
      );
    }
    this.expectUnanswered('reject');
    this.layer.unwatchCancel(this.transaction);
    this.transaction.respond(
      responseTo(this.request, status, { toTag: this.toTag, reason, headers: headers ?? [] }),
    );
    this.transition('rejected');
    this.dialog?.terminate({ kind: 'early-ended' });
  }

  /**
   * Ends the call from our side: before the answer a 487 (the UAS's way to drop an INVITE,
   * as a CANCEL would); after it a BYE, which waits for the ACK (RFC 3261 15).
   */
  async hangup(): Promise<void> {
    if (this.current === 'received' || this.current === 'early') {
      this.reject(487);
    } else if (this.current === 'answered' || this.current === 'confirmed') {
      await this.dialog?.bye();
    }
  }

  private provisional(status: number, sdp: string | undefined, headers?: Headers): void {
    this.expectUnanswered(status === 180 ? 'ring' : 'progress');
    const response = this.response(status, sdp, headers);
    const dialog = this.dialogFor(response);
    if (sdp !== undefined) {
      dialog.localSdp = sdp;
      dialog.remoteSdp = this.offer;
    }
    this.transaction.respond(response);
    if (this.current === 'received') this.transition('early');
  }

  /**
   * A 1xx or 2xx: RFC 3261 12.1.1: "the UAS MUST copy all Record-Route header field values
   * from the request into the response" and "MUST add a Contact header field".
   */
  private response(status: number, sdp: string | undefined, headers?: Headers): SipResponse {
    const rows: (readonly [string, string])[] = [
      ...this.request.headers.getRows('Record-Route').map((row) => ['Record-Route', row] as const),
      ['Contact', `<${this.contact}>`],
    ];
    if (status >= 200) rows.push(['Allow', this.layer.allowed().join(', ')]);
    rows.push(...(headers ?? []));
    if (sdp !== undefined) rows.push(['Content-Type', SDP]);
    return responseTo(this.request, status, { toTag: this.toTag, headers: rows, body: sdp });
  }

  /** The dialog the first 1xx or 2xx makes; the later ones are in it. */
  private dialogFor(response: SipResponse): Dialog {
    if (this.dialog) return this.dialog;
    const dialog = Dialog.forUas(this.request, response, this.transaction.flow);
    dialog.whenEnded.push((end) => {
      // RFC 3261 15: a BYE on the early dialog ends the INVITE too.
      if (end.kind === 'bye' && end.by === 'remote') this.cancelled();
    });
    this.layer.add(dialog);
    this.dialog = dialog;
    return dialog;
  }

  private cancelled(): void {
    if (this.current !== 'received' && this.current !== 'early') return;
    this.layer.unwatchCancel(this.transaction);
    // RFC 3261 9.2: "the UAS core ... SHOULD respond to the INVITE with a 487".
    if (!this.transaction.answered) {
      this.transaction.respond(responseTo(this.request, 487, { toTag: this.toTag }));
    }
    this.transition('cancelled');
    this.dialog?.terminate({ kind: 'early-ended' });
    this.layer.safely(() => this.delegate.onCancelled?.());
    this.release();
  }

  /**
   * Lets the owner go once it has heard its last event: the server transaction keeps this
   * object for its own timers (32 s on UDP), and the owner (a call) should not live as long.
   */
  private release(): void {
    this.delegate = {};
  }

  private expectUnanswered(action: string): void {
    if (this.current !== 'received' && this.current !== 'early') {
      throw new Error(`cannot ${action} an INVITE that is ${this.current}`);
    }
  }

  private transition(to: IncomingInviteState): void {
    if (!MOVES[this.current].includes(to)) {
      throw new Error(`incoming INVITE: illegal state transition ${this.current} -> ${to}`);
    }
    this.current = to;
  }
}
