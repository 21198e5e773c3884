import {
  MESSAGE_CALLBACK_RETRY_DELAYS_SECONDS,
  type CallbackDelivery,
} from '../callbacks/index.js';
import type { Clock } from '../core/clock.js';
import { conflict, UniqueViolation } from '../core/errors.js';
import type { TollfreeStatus, TollfreeVerificationRecord } from '../state/records.js';
import type { State } from '../state/state.js';
import { canMove } from './verification-rules.js';

/** messaging document: UPDATE_REQUIRED with no update within six days becomes REJECTED. */
export const UPDATE_WINDOW_MS = 6 * 24 * 60 * 60 * 1000;

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

  /**
   * Rejects a tenant's requests left in UPDATE_REQUIRED for six days. State-based, so it
   * survives a restart; each expiry is claimed once in the store (a unique key), so with
   * several gateway nodes sweeping only one moves the request and sends its callback.
   * Resolves with how many it rejected.
   */
  async expireOverdue(tenant: string, now: number): Promise<number> {
    const { state } = this.options;
    let rejected = 0;
    for (const request of await state.tollfreeVerifications.all(tenant)) {
      const since = request.history.at(-1)?.time ?? request.modified;
      if (request.status !== 'UPDATE_REQUIRED' || now - since < UPDATE_WINDOW_MS) continue;
      const claim = `${request.uuid}:${request.history.length}`;
      try {
        await state.store.put(
          'tollfree_expiry',
          tenant,
          claim,
          { at: now },
          {
            score: now,
            indexes: [],
            unique: [{ space: 'tollfree_expiry', value: claim }],
          },
        );
      } catch (error) {
        if (error instanceof UniqueViolation) continue;
        throw error;
      }
      await this.move(request, 'REJECTED', {
        rejection_reason: 'NO_UPDATE_WITHIN_SIX_DAYS',
        error_message: 'the update review asked for was not made within six days',
      });
      rejected++;
    }
    return rejected;
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
