import type { Scheduler } from '../core/scheduler.js';
import type { MessageRecord } from '../state/records.js';
import type { State } from '../state/state.js';
import type { CarrierMessageIds } from './carrier-message-ids.js';
import { CHATAPP_CARRIER } from './chatapp/chatapp-channel.js';
import {
  chatAppStep,
  chatAppSteps,
  conversationOf,
  type ChatAppStatus,
} from './chatapp/chatapp-status.js';
import type { KeyedTurns } from '../core/keyed-turns.js';
import type { MessageLog } from './message-log.js';
import type { MessageMetrics } from './message-metrics.js';
import type { MessageStates } from './message-states.js';
import type { DeliveryReceipt } from './sms/delivery-receipt.js';

export interface MessageReceiptsOptions {
  state: State;
  locks: KeyedTurns;
  carrierIds: CarrierMessageIds;
  states: MessageStates;
  metrics: MessageMetrics;
  log: MessageLog;
  scheduler: Scheduler;
}

/** How long an unknown receipt id is looked up again, step by step (2.3 s in all). */
const RECEIPT_GRACE_MS = [50, 250, 2000];

const FINAL_STATES = new Set(['delivered', 'undelivered', 'failed', 'read']);

/**
 * What comes back after a message was sent: delivery receipts from carriers and statuses from
 * the chat-app upstream, matched to the part they stand for and followed to a final state.
 */
export class MessageReceipts {
  private readonly states: MessageStates;

  constructor(private readonly options: MessageReceiptsOptions) {
    this.states = options.states;
  }

  /**
   * A status from upstream for a chat-app message. Statuses come in any order: a message never
   * moves back, and one read before it was reported delivered goes through delivered (with its
   * callback) first. Its id is kept after read, as late statuses still come (the sweep ends it).
   */
  async chatAppStatus(status: ChatAppStatus): Promise<void> {
    const ref = await this.findRef(CHATAPP_CARRIER, status.id);
    if (!ref) {
      this.options.log.warn(
        { carrierId: status.id, status: status.status },
        'chat-app status for a message id nobody sent',
      );
      return;
    }
    await this.options.locks.run(ref.message_uuid, async () => {
      let current = await this.options.state.messages.get(ref.account, ref.message_uuid);
      if (!current) return;
      const steps = chatAppSteps(current.message_state, status.status);
      const conversation = conversationOf(status, current);
      if (steps.length === 0 && conversation.conversation_id !== current.conversation_id)
        await this.states.save({ ...current, ...conversation }, current);
      for (const step of steps) {
        const next = chatAppStep(current, step, status, this.options.scheduler.now());
        current = await this.states.save(next, current);
        if (step === 'failed' || step === 'delivered') this.options.metrics.finished(current);
      }
    });
  }

  /** A delivery receipt from `carrier`; an id nobody sent is logged and counted. */
  async receipt(carrier: string, receipt: DeliveryReceipt): Promise<void> {
    const ref = await this.findRef(carrier, receipt.messageId);
    if (!ref) {
      this.options.metrics.receipt(false);
      this.options.log.warn(
        { carrier, carrierId: receipt.messageId, stat: receipt.stat },
        'delivery receipt for a message id nobody sent',
      );
      return;
    }
    this.options.metrics.receipt(true);
    if (receipt.outcome === 'pending') return;
    await this.options.locks.run(ref.message_uuid, async () => {
      const current = await this.options.state.messages.get(ref.account, ref.message_uuid);
      if (!current || FINAL_STATES.has(current.message_state)) return;
      const part = current.parts[ref.part];
      if (!part || part.state === 'delivered' || part.state === 'undelivered') return;
      const parts = current.parts.map((p, k) =>
        k === ref.part ? { ...p, state: receipt.outcome, error_code: receipt.errorCode } : p,
      );
      const failedPart = parts.find((p) => p.state === 'undelivered' || p.state === 'failed');
      const allDelivered = parts.every((p) => p.state === 'delivered');
      const now = this.options.scheduler.now();
      let next: MessageRecord = { ...current, parts, updated_time: now };
      if (failedPart || allDelivered) {
        next = {
          ...next,
          message_state: failedPart ? 'undelivered' : 'delivered',
          error_code: failedPart ? failedPart.error_code : '000',
          error_message: failedPart ? `delivery receipt ${receipt.stat}` : null,
          delivery_report_time: now,
        };
      }
      await this.states.save(next, current);
      if (next.message_state !== current.message_state) {
        this.options.metrics.finished(next);
        await this.options.carrierIds.forget(
          carrier,
          parts.map((p) => p.carrier_id).filter((id): id is string => id !== null),
        );
      }
    });
  }

  /**
   * The part a carrier id stands for. Some SMSCs send a receipt before the submit_sm_resp that
   * names its id, or in the same segment, read before the answer is handled (and upstream may
   * report a status before its answer to the send is read): the answer gets a moment to arrive
   * before the id is called unknown.
   */
  private async findRef(carrier: string, carrierId: string) {
    let ref = await this.options.carrierIds.find(carrier, carrierId);
    for (const waitMs of RECEIPT_GRACE_MS) {
      if (ref) break;
      await this.options.carrierIds.rememberedOrAfter(carrier, carrierId, waitMs);
      ref = await this.options.carrierIds.find(carrier, carrierId);
    }
    return ref;
  }
}
