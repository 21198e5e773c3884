import { Transaction, type TransactionOptions, type TransactionUserBase } from './transaction.js';

export type NonInviteServerState = 'trying' | 'proceeding' | 'completed' | 'terminated';

const MOVES: Record<NonInviteServerState, NonInviteServerState[]> = {
  trying: ['proceeding', 'completed', 'terminated'],
  proceeding: ['completed', 'terminated'],
  completed: ['terminated'],
  terminated: [],
};

/** RFC 3261 17.2.2: the non-INVITE server transaction. */
export class NonInviteServerTransaction extends Transaction<NonInviteServerState> {
  protected readonly kind = 'non-INVITE server transaction';
  private lastResponse: Buffer | null = null;

  constructor(options: TransactionOptions, tu: TransactionUserBase) {
    super(options, 'trying', MOVES, tu);
  }

  respond(status: number, data: Buffer): void {
    if (this.state === 'completed' || this.state === 'terminated') {
      throw new Error(`${this.kind}: cannot send ${status} in state ${this.state}`);
    }
    this.lastResponse = data;
    if (status < 200) {
      if (this.state === 'trying') this.transition('proceeding');
      this.send(data);
      return;
    }
    this.transition('completed');
    if (!this.send(data)) return;
    this.afterOrNow('J', this.timers.J, () => this.transition('terminated'));
  }

  /** A retransmission of the request arrived. */
  receiveRequest(): void {
    // RFC 3261 17.2.2: absorbed in Trying; the last response is sent again in Proceeding and
    // Completed.
    if ((this.state === 'proceeding' || this.state === 'completed') && this.lastResponse) {
      this.send(this.lastResponse);
    }
  }
}
