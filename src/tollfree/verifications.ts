import {
  MESSAGE_CALLBACK_RETRY_DELAYS_SECONDS,
  type CallbackDelivery,
} from '../callbacks/index.js';
import type { Clock } from '../core/clock.js';
import { conflict } from '../core/errors.js';
import type { TollfreeStatus, TollfreeVerificationRecord } from '../state/records.js';
import type { State } from '../state/state.js';
import { canMove } from './verification-rules.js';

export interface TollfreeVerificationsOptions {
  state: State;
  /** Status callbacks, retried 60, 120 and 240 s later. */
  callbacks: CallbackDelivery;
  clock: Clock;
}

/** What a move carries besides the new status. */
export interface MoveDetails {
  error_message?: string;
  rejection_reason?: string;
}

/**
 * Toll-free verification requests as they move through review: only along the document's
 * transitions, each move kept in the request's history and sent, signed, to its callback_url.
 */
export class TollfreeVerifications {
  constructor(private readonly options: TollfreeVerificationsOptions) {}

  /** The request after a move to `to` at `now`; throws 409 naming the current status. */
  moved(
    current: TollfreeVerificationRecord,
    to: TollfreeStatus,
    details: MoveDetails,
    now: number,
  ): TollfreeVerificationRecord {
    if (!canMove(current.status, to))
      throw conflict(
        `toll-free verification ${current.uuid} is ${current.status}: it cannot become ${to}`,
      );
    const errorMessage = details.error_message ?? '';
    const rejectionReason = to === 'REJECTED' ? (details.rejection_reason ?? '') : '';
    return {
      ...current,
      status: to,
      modified: now,
      error_message: errorMessage,
      rejection_reason: rejectionReason,
      history: [
        ...current.history,
        { status: to, time: now, error_message: errorMessage, rejection_reason: rejectionReason },
      ],
    };
  }

  /** Moves a stored request, and sends its callback. */
  async move(
    current: TollfreeVerificationRecord,
    to: TollfreeStatus,
    details: MoveDetails = {},
  ): Promise<TollfreeVerificationRecord> {
    const next = this.moved(current, to, details, this.options.clock.now());
    await this.options.state.tollfreeVerifications.update(next, current);
    this.notify(next);
    return next;
  }

  /** The status callback of a request at its current status (`uuid`, `number`, `status`, `error_message`). */
  notify(record: TollfreeVerificationRecord): void {
    if (!record.callback_url) return;
    this.options.callbacks
      .send({
        url: record.callback_url,
        method: record.callback_method,
        params: {
          uuid: record.uuid,
          number: record.number,
          status: record.status,
          error_message: record.error_message,
        },
        accountId: record.subaccount ?? record.account,
        retryDelaysSeconds: [...MESSAGE_CALLBACK_RETRY_DELAYS_SECONDS],
        timeoutMs: 8000,
        context: { kind: 'tollfree_verification', uuid: record.uuid },
      })
      .catch(() => undefined);
  }
}
