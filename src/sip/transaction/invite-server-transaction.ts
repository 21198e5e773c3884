import { Transaction, type TransactionOptions, type TransactionUserBase } from './transaction.js';

export type InviteServerState =
  'proceeding' | 'completed' | 'confirmed' | 'accepted' | 'terminated';

const MOVES: Record<InviteServerState, InviteServerState[]> = {
  proceeding: ['completed', 'accepted', 'terminated'],
  completed: ['confirmed', 'terminated'],
  confirmed: ['terminated'],
  accepted: ['terminated'],
  terminated: [],
};

/**
 * RFC 3261 17.2.1 with RFC 6026 7.1: the INVITE server transaction. The TU hands it each
 * response already serialised; the transaction sends, retransmits and absorbs.
 */
export class InviteServerTransaction extends Transaction<InviteServerState> {
  protected readonly kind = 'INVITE server transaction';
  private lastResponse: Buffer | null = null;

  constructor(options: TransactionOptions, tu: TransactionUserBase) {
    super(options, 'proceeding', MOVES, tu);
  }

  /** The TU responds. Throws IllegalTransition when the state does not allow that response. */
  respond(status: number, data: Buffer): void {
    if (this.state === 'accepted' && status >= 200 && status < 300) {
      // RFC 6026 7.1: in Accepted the TU retransmits its 2xx through the transaction.
      this.send(data);
      return;
    }
    if (this.state !== 'proceeding')
      throw new Error(`${this.kind}: cannot send ${status} in state ${this.state}`);
    this.lastResponse = data;
    if (status < 200) {
      this.send(data);
      return;
    }
    if (status < 300) {
      this.transition('accepted');
      this.startTimer('L', this.timers.L, () => this.transition('terminated'));
      this.send(data);
      return;
    }
    this.transition('completed');
    if (!this.send(data)) return;
    // RFC 3261 17.2.1: "For unreliable transports, timer G is set to fire in T1 seconds";
    // timer H is set for all transports.
    if (!this.options.reliable) this.retransmitAfter(this.timers.G);
    this.startTimer('H', this.timers.H, () => {
      if (this.state === 'completed') this.timeout();
    });
  }

  /** A retransmission of the INVITE arrived. */
  receiveRequest(): void {
    // RFC 3261 17.2.1: in Proceeding the most recent provisional response is sent again; in
    // Completed the final one. RFC 6026 7.1: in Accepted it is absorbed (the TU owns the 2xx).
    if ((this.state === 'proceeding' || this.state === 'completed') && this.lastResponse) {
      this.send(this.lastResponse);
    }
  }

  /** An ACK matching this transaction (so for a non-2xx final response) arrived. */
  receiveAck(): void {
    if (this.state !== 'completed') return;
    this.stopTimer('G');
    this.stopTimer('H');
    this.transition('confirmed');
    this.afterOrNow('I', this.timers.I, () => this.transition('terminated'));
  }

  private retransmitAfter(interval: number): void {
    this.startTimer('G', interval, () => {
      if (this.state !== 'completed' || !this.lastResponse) return;
      if (this.send(this.lastResponse)) {
        this.retransmitAfter(Math.min(2 * interval, this.options.timers.t2));
      }
    });
  }
}
