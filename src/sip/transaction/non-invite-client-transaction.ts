import { Transaction, type TransactionOptions, type TransactionUserBase } from './transaction.js';

export type NonInviteClientState = 'trying' | 'proceeding' | 'completed' | 'terminated';

export interface NonInviteClientUser<R> extends TransactionUserBase {
  onResponse(status: number, response: R): void;
}

const MOVES: Record<NonInviteClientState, NonInviteClientState[]> = {
  trying: ['proceeding', 'completed', 'terminated'],
  proceeding: ['completed', 'terminated'],
  completed: ['terminated'],
  terminated: [],
};

/** RFC 3261 17.1.2: the non-INVITE client transaction. */
export class NonInviteClientTransaction<R> extends Transaction<NonInviteClientState> {
  protected readonly kind = 'non-INVITE client transaction';

  /** The request, needed until the final response only (Timer K keeps the transaction on). */
  private request: Buffer | null;

  constructor(
    options: TransactionOptions,
    request: Buffer,
    private readonly tu: NonInviteClientUser<R>,
  ) {
    super(options, 'trying', MOVES, tu);
    this.request = request;
  }

  start(): void {
    if (!this.request || !this.send(this.request)) return;
    // RFC 3261 17.1.2.2: timer F is always set; timer E only for unreliable transports.
    this.startTimer('F', this.timers.F, () => {
      if (this.state === 'trying' || this.state === 'proceeding') this.timeout();
    });
    if (!this.options.reliable) this.retransmitAfter(this.timers.E);
  }

  receiveResponse(status: number, response: R): void {
    if (this.state === 'completed' || this.state === 'terminated') return;
    if (status < 200) {
      if (this.state === 'trying') this.transition('proceeding');
      this.tu.onResponse(status, response);
      return;
    }
    this.stopTimer('E');
    this.stopTimer('F');
    this.transition('completed');
    this.request = null;
    this.tu.onResponse(status, response);
    this.afterOrNow('K', this.timers.K, () => this.transition('terminated'));
  }

  private retransmitAfter(interval: number): void {
    this.startTimer('E', interval, () => {
      if (this.state !== 'trying' && this.state !== 'proceeding') return;
      if (!this.request || !this.send(this.request)) return;
      // RFC 3261 17.1.2.2: in Trying the interval doubles up to T2; in Proceeding it is T2.
      this.retransmitAfter(
        this.state === 'trying'
          ? Math.min(2 * interval, this.options.timers.t2)
          : this.options.timers.t2,
      );
    });
  }
}
