import { Transaction, type TransactionOptions, type TransactionUserBase } from './transaction.js';

export type InviteClientState = 'calling' | 'proceeding' | 'completed' | 'accepted' | 'terminated';

export interface InviteClientUser<R> extends TransactionUserBase {
  /** Every 1xx and final response, and (RFC 6026) every 2xx retransmission in Accepted. */
  onResponse(status: number, response: R): void;
}

const MOVES: Record<InviteClientState, InviteClientState[]> = {
  calling: ['proceeding', 'completed', 'accepted', 'terminated'],
  proceeding: ['completed', 'accepted', 'terminated'],
  completed: ['terminated'],
  accepted: ['terminated'],
  terminated: [],
};

/** RFC 3261 17.1.1 with RFC 6026 7.2: the INVITE client transaction. */
export class InviteClientTransaction<R> extends Transaction<InviteClientState> {
  protected readonly kind = 'INVITE client transaction';
  private ack: Buffer | null = null;
  /**
   * The INVITE and the ACK builder, needed until the final response only. A 2xx keeps the
   * transaction 32 s (Timer M) and a non-2xx 32 s (Timer D): neither needs them then.
   */
  private request: Buffer | null;
  private makeAck: ((response: R) => Buffer) | null;

  constructor(
    options: TransactionOptions,
    request: Buffer,
    private readonly tu: InviteClientUser<R>,
    /** RFC 3261 17.1.1.3: builds the ACK for a non-2xx final response. */
    makeAck: (response: R) => Buffer,
  ) {
    super(options, 'calling', MOVES, tu);
    this.request = request;
    this.makeAck = makeAck;
  }

  start(): void {
    if (!this.request || !this.send(this.request)) return;
    // RFC 3261 17.1.1.2: "If an unreliable transport is being used, the client transaction MUST
    // start timer A with a value of T1." Each firing retransmits and doubles the interval.
    if (!this.options.reliable) this.retransmitAfter(this.timers.A);
    this.startTimer('B', this.timers.B, () => {
      if (this.state === 'calling') this.timeout();
    });
  }

  receiveResponse(status: number, response: R): void {
    switch (this.state) {
      case 'calling':
      case 'proceeding':
        if (status < 200) {
          if (this.state === 'calling') {
            this.stopTimer('A');
            this.stopTimer('B');
            this.transition('proceeding');
          }
          this.tu.onResponse(status, response);
        } else if (status < 300) {
          this.stopTimer('A');
          this.stopTimer('B');
          // RFC 6026 7.2: on a 2xx the transaction enters Accepted and starts Timer M.
          this.transition('accepted');
          this.request = this.makeAck = null;
          this.startTimer('M', this.timers.M, () => this.transition('terminated'));
          this.tu.onResponse(status, response);
        } else {
          this.stopTimer('A');
          this.stopTimer('B');
          this.transition('completed');
          // RFC 3261 17.1.1.2: the client transaction MUST generate an ACK for a 300-699
          // response and pass the response up to the TU. The ACK goes first, so that a TU
          // that sends a new INVITE at once (a digest retry) does not overtake it on the wire.
          this.ack = this.makeAck!(response);
          this.request = this.makeAck = null;
          const acked = this.send(this.ack);
          this.tu.onResponse(status, response);
          if (!acked) return;
          this.afterOrNow('D', this.timers.D, () => this.transition('terminated'));
        }
        return;
      case 'completed':
        // RFC 3261 17.1.1.2: a retransmitted final response makes the ACK go again, and is not
        // passed up.
        if (status >= 300 && this.ack) this.send(this.ack);
        return;
      case 'accepted':
        if (status >= 200 && status < 300) this.tu.onResponse(status, response);
        return;
      case 'terminated':
        return;
    }
  }

  private retransmitAfter(interval: number): void {
    this.startTimer('A', interval, () => {
      if (this.state !== 'calling' || !this.request) return;
      if (this.send(this.request)) this.retransmitAfter(interval * 2);
    });
  }
}
