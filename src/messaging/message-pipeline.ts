import { join } from 'node:path';
import type { CallbackDelivery, RetryQueue } from '../callbacks/index.js';
import { PeriodicSweep } from '../core/periodic-sweep.js';
import type { Scheduler } from '../core/scheduler.js';
import type { MessageRecord, OutboxRecord } from '../state/records.js';
import type { State } from '../state/state.js';
import type { CarrierNetwork, PartOutcome } from './carrier-network.js';
import { CarrierMessageIds } from './carrier-message-ids.js';
import { KeyedTurns } from '../core/keyed-turns.js';
import { tollFreeRefusal } from './tollfree-refusal.js';
import { MessageIntake } from './message-intake.js';
import { MessageReceipts } from './message-receipts.js';
import { MessageStates } from './message-states.js';
import type { MessageSender } from './new-message.js';
import type { MessageLog } from './message-log.js';
import { SentLedger, type SentEntry } from './sent-ledger.js';
import { RefusedMessages } from './refused-messages.js';
import type { MessageMetrics } from './message-metrics.js';
import type { MessageRateDeck } from './message-rate-deck.js';
import { optOutId } from './opt-out.js';
import type { ChatAppSendRequest, MmsSendRequest, SendRequest } from './send-request.js';
import type { MmsChannel } from './mms/mms-channel.js';
import { CHATAPP_CARRIER, type ChatAppChannel } from './chatapp/chatapp-channel.js';
import type { ChatAppStatus } from './chatapp/chatapp-status.js';
import type { ChatAppContent } from './chatapp/chatapp-send.js';
import { planSms } from './sms/sms-plan.js';
import type { DeliveryReceipt } from './sms/delivery-receipt.js';
import type { AccountLimiter } from '../limits/account-limiter.js';

/** What the send queue holds: only ids, never a number or a text. */
export interface SendJob {
  account: string;
  message_uuid: string;
}

export interface MessagePipelineOptions {
  state: State;
  /** Status callbacks, with the message retry delays. */
  callbacks: CallbackDelivery;
  /** Durable on Redis; on the embedded store the outbox is read again at start. */
  queue: RetryQueue<SendJob>;
  /** The tenant whose outbox is recovered. */
  mainAccount: string;
  carriers: CarrierNetwork;
  deck: MessageRateDeck;
  scheduler: Scheduler;
  log: MessageLog;
  metrics: MessageMetrics;
  smartEncoding: boolean;
  /** Chat-app messages go upstream through it; null refuses them. */
  chatApp: ChatAppChannel | null;
  /** MMS: media fetched and stored, messages to the MMSC. */
  mms: MmsChannel;
  /** The account limits (messages per second); none: no limits. */
  limits?: AccountLimiter;
  /**
   * The folder (under the data directory) whose journal files keep what the store still owes:
   * sends whose record it did not take, refused sends to withdraw. Null: in memory only.
   */
  journalDir?: string | null;
}

export type { ChatAppStatus } from './chatapp/chatapp-status.js';
export type { MessageLog } from './message-log.js';
export type { MessageSender } from './new-message.js';

/** Wire-compat error codes for a part the carrier refused, by SMPP command_status. */
const REFUSAL_CODES = new Map<number, string>([
  [0x01, '110'], // ESME_RINVMSGLEN
  [0x0a, '40'], // ESME_RINVSRCADR
  [0x0b, '50'], // ESME_RINVDSTADR
  [0x45, '300'], // ESME_RSUBMITFAIL
  [0x61, '100'], // ESME_RINVSCHED (refused by the carrier's rules)
  [0x65, '100'], // ESME_RX_R_APPN: permanent refusal
]);

/** How often the records of sends the store could not take are tried again. */
const OWED_RECORDS_EVERY_MS = 1000;

/** How often the ids of parts whose receipt never came are swept. */
const CARRIER_ID_SWEEP_EVERY_MS = 60 * 60 * 1000;

const FINAL_STATES = new Set(['delivered', 'undelivered', 'failed', 'read']);

/**
 * The outbound message pipeline: accepts a send (records and outbox written and durable before
 * the answer), queues it, hands it to the carrier that routes its destination, and follows it
 * through receipts to its final state, with a status callback at each step.
 */
export class MessagePipeline {
  private readonly state: State;
  private readonly options: MessagePipelineOptions;
  private readonly locks = new KeyedTurns();
  readonly carrierIds: CarrierMessageIds;
  private readonly carrierIdSweep: PeriodicSweep;
  private readonly sentLedger: SentLedger;
  private readonly refused: RefusedMessages;
  private readonly owedRecords: PeriodicSweep;
  private lastOwedError: string | null = null;
  private closed = false;
  private readonly states: MessageStates;
  private readonly intake: MessageIntake;
  private readonly receipts: MessageReceipts;

  constructor(options: MessagePipelineOptions) {
    this.options = options;
    this.state = options.state;
    this.carrierIds = new CarrierMessageIds(options.state.store, options.scheduler);
    this.carrierIdSweep = new PeriodicSweep(
      (now) => this.carrierIds.sweep(now),
      options.scheduler,
      CARRIER_ID_SWEEP_EVERY_MS,
      (error) => options.log.warn({ err: error.message }, 'sweeping old carrier ids failed'),
    );
    const journal = (name: string) => (options.journalDir ? join(options.journalDir, name) : null);
    this.sentLedger = new SentLedger(journal('messages-sent.jsonl'));
    this.refused = new RefusedMessages(options.state, journal('messages-refused.jsonl'));
    this.states = new MessageStates(
      options.state,
      options.callbacks,
      options.log,
      () => this.closed,
    );
    this.intake = new MessageIntake({
      ...options,
      states: this.states,
      refused: this.refused,
      enqueue: (account, uuid) => this.enqueue(account, uuid),
    });
    this.receipts = new MessageReceipts({
      ...options,
      locks: this.locks,
      carrierIds: this.carrierIds,
      states: this.states,
    });
    this.owedRecords = new PeriodicSweep(
      async () => {
        const recorded = (await this.refused.withdrawAll()) + (await this.recordAllOwed());
        if (recorded > 0 && this.lastOwedError !== null) {
          this.lastOwedError = null;
          options.log.info({}, 'the records of messages sent while the store was away are written');
        }
        return recorded;
      },
      options.scheduler,
      OWED_RECORDS_EVERY_MS,
      (error) => {
        if (error.message === this.lastOwedError) return;
        this.lastOwedError = error.message;
        options.log.warn(
          { err: error.message, owed: this.sentLedger.owed },
          'the records of sent messages wait for the store',
        );
      },
    );
  }

  /**
   * Starts sending, and queues again what the outbox holds: on the embedded store everything
   * queued before a restart; on Redis what a stopping gateway gave back unsent (a message whose
   * job still waits in BullMQ is not queued twice: one job per message).
   */
  async start(): Promise<void> {
    this.options.queue.start((job) => this.dispatch(job));
    this.carrierIdSweep.start();
    this.owedRecords.start();
    const waiting = await this.state.outbox.all(this.options.mainAccount);
    for (const entry of waiting.reverse()) await this.enqueue(entry.account, entry.message_uuid);
    if (waiting.length > 0)
      this.options.log.info({ messages: waiting.length }, 'queued messages taken up again');
  }

  /** Stops sending: what is still unsent stays in the outbox. Call before the carriers close. */
  stopSending(): void {
    this.closed = true;
    this.carrierIdSweep.stop();
  }

  async close(): Promise<void> {
    this.stopSending();
    await this.options.queue.close();
    // A last try at what is owed; what the store still refuses stays in the journal file.
    await this.owedRecords.sweep();
    this.owedRecords.stop();
    this.sentLedger.close();
    this.refused.close();
  }

  /**
   * Accepts a checked send request: one record and outbox entry per valid destination, all
   * written and durable before the uuids are returned. Throws (having written nothing) when the
   * sender is not the account's.
   */
  accept(
    sender: MessageSender,
    request: SendRequest | ChatAppSendRequest | MmsSendRequest,
  ): Promise<string[]> {
    return this.intake.accept(sender, request);
  }

  /** A delivery receipt from `carrier`; an id nobody sent is logged and counted. */
  receipt(carrier: string, receipt: DeliveryReceipt): Promise<void> {
    return this.receipts.receipt(carrier, receipt);
  }

  /** A status from upstream for a chat-app message. */
  chatAppStatus(status: ChatAppStatus): Promise<void> {
    return this.receipts.chatAppStatus(status);
  }

  /** One job per message, whoever queues it (a send, or a start that finds it in the outbox). */
  private enqueue(account: string, uuid: string): Promise<void> {
    return this.options.queue.schedule({ account, message_uuid: uuid }, 0, `message-${uuid}`);
  }

  /**
   * One queued message to its carrier. A job may run again for a message already handed over
   * (its queue lock lapsed while Redis was away, a record write failed, another process took a
   * stalled job): the message's lock and the sent ledger make it record that send, not repeat it.
   */
  dispatch(job: SendJob): Promise<void> {
    return this.locks.run(job.message_uuid, () => this.dispatchHeld(job));
  }

  private async dispatchHeld(job: SendJob): Promise<void> {
    if (this.refused.has(job.message_uuid)) return this.refused.withdraw(job.message_uuid);
    const owed = this.sentLedger.get(job.message_uuid);
    if (owed) return this.recordOwed(owed);
    const entry = await this.state.outbox.get(job.account, job.message_uuid);
    if (!entry) return;
    const now = this.options.scheduler.now();
    if (now >= entry.expires_at)
      return this.fail(entry, '420', 'message expired before it was sent');
    // Beyond the account's messages per second it waits in the queue for the next second.
    const wait = (await this.options.limits?.delay('messages_per_second', entry)) ?? 0;
    if (wait > 0) {
      await this.options.queue.schedule(
        { account: entry.account, message_uuid: entry.message_uuid },
        wait,
        `message-${entry.message_uuid}-${now}`,
      );
      return;
    }
    if (entry.chatapp) return this.dispatchChatApp(entry, entry.chatapp as ChatAppContent);
    const unverified = await tollFreeRefusal(this.state, entry);
    if (unverified) return this.fail(entry, unverified.code, unverified.reason);
    if (entry.mms) return this.dispatchMms(entry);
    if (await this.state.optOuts.get(entry.account, optOutId(entry.src, entry.dst)))
      return this.fail(entry, '200', 'the destination opted out of messages from this sender');
    const carrier = this.options.carriers.route(entry.dst);
    if (!carrier) return this.fail(entry, '90', 'no carrier route takes this destination');

    const plan = planSms(entry.text, { smartEncoding: this.options.smartEncoding });
    // The message is held from the first submit until its parts are recorded as sent: a
    // receipt that comes back at once waits for that record instead of racing it.
    const remembered: Promise<unknown>[] = [];
    const outcomes = await carrier.send({
      source: entry.src,
      destination: entry.dst,
      plan,
      deadline: entry.expires_at,
      onPartAccepted: (part, carrierId) => {
        const ref = { account: entry.account, message_uuid: entry.message_uuid, part };
        remembered.push(this.carrierIds.remember(carrier.name, carrierId, ref));
      },
    });
    const early = await Promise.allSettled(remembered);
    // Closing: a submit the carrier link gave back unsent stays in the outbox for the next start.
    const unsent = outcomes.some((o) => !o.ok && o.commandStatus === null && !o.expired);
    if (this.closed && unsent) return;
    const idsKept = early.every((r) => r.status === 'fulfilled');
    await this.recordHandedOver(entry, carrier.name, outcomes, idsKept);
  }

  /**
   * A message the carrier answered: entered in the sent ledger before anything is written, so
   * that no later run sends it again, then recorded; a record the store did not take stays owed.
   */
  private async recordHandedOver(
    entry: OutboxRecord,
    carrier: string,
    outcomes: PartOutcome[],
    idsKept = false,
  ) {
    const sent = {
      account: entry.account,
      message_uuid: entry.message_uuid,
      carrier,
      outcomes,
      at: this.options.scheduler.now(),
    };
    this.sentLedger.sent(sent);
    try {
      if (!idsKept) await this.rememberCarrierIds(sent);
      await this.recordSent(entry, entry, carrier, outcomes, sent.at);
      this.sentLedger.recorded(entry.message_uuid);
    } catch (error) {
      this.sentLedger.unrecorded(entry.message_uuid);
      this.options.log.warn(
        { message_uuid: entry.message_uuid, err: (error as Error).message },
        'message sent, its record not written yet: kept on this node until the store takes it',
      );
      throw error;
    }
  }

  private async rememberCarrierIds(sent: SentEntry): Promise<void> {
    await Promise.all(
      sent.outcomes.map((o, part) =>
        o.ok
          ? this.carrierIds.remember(sent.carrier, o.messageId, {
              account: sent.account,
              message_uuid: sent.message_uuid,
              part,
            })
          : undefined,
      ),
    );
  }

  /** Records a send the ledger holds; the caller holds the message's lock. */
  private async recordOwed(sent: SentEntry): Promise<void> {
    await this.rememberCarrierIds(sent);
    // Its outbox entry may be gone already: a write the store took after the node gave up on it.
    const outbox = await this.state.outbox.get(sent.account, sent.message_uuid);
    await this.recordSent(sent, outbox ?? null, sent.carrier, sent.outcomes, sent.at);
    this.sentLedger.recorded(sent.message_uuid);
  }

  /** Writes the records of sends the store could not take before; runs each second. */
  private async recordAllOwed(): Promise<number> {
    let recorded = 0;
    for (const sent of this.sentLedger.unrecordedEntries()) {
      await this.locks.run(sent.message_uuid, async () => {
        if (this.sentLedger.get(sent.message_uuid)) await this.recordOwed(sent);
      });
      recorded++;
    }
    return recorded;
  }

  /** A chat-app message upstream; its id (wamid) is kept for the statuses that follow. */
  private async dispatchChatApp(entry: OutboxRecord, content: ChatAppContent): Promise<void> {
    const channel = this.options.chatApp;
    if (!channel) return this.fail(entry, '300', 'chat-app messages are not configured');
    const outcome = await channel.send(entry, content);
    if ('retry' in outcome) {
      // It stays in the outbox; a later job sends it, or fails it with 420 once it expires.
      if (this.closed) return;
      const at = this.options.scheduler.now();
      this.options.log.warn(
        { message_uuid: entry.message_uuid, err: outcome.retry, retryInMs: channel.retryMs },
        'chat-app upstream did not take the message; trying again',
      );
      await this.options.queue.schedule(
        { account: entry.account, message_uuid: entry.message_uuid },
        channel.retryMs,
        `message-${entry.message_uuid}-${at}`,
      );
      return;
    }
    await this.recordHandedOver(entry, CHATAPP_CARRIER, [outcome]);
  }

  /** An MMS to the MMSC; its message id is kept for the delivery report. */
  private async dispatchMms(entry: OutboxRecord): Promise<void> {
    const carrier = this.options.mms.carrier?.name ?? 'mms';
    const outcome = await this.options.mms.send(entry, this.options.scheduler.now());
    await this.recordHandedOver(entry, carrier, [outcome]);
  }

  /**
   * The carrier's answers become the record (sent, or failed when a part was refused) and the
   * outbox entry goes. Only a record still queued changes: written once, whoever records it.
   */
  private async recordSent(
    ref: { account: string; message_uuid: string },
    outbox: OutboxRecord | null,
    carrier: string,
    outcomes: PartOutcome[],
    sentAt = this.options.scheduler.now(),
  ) {
    const current = await this.state.messages.get(ref.account, ref.message_uuid);
    if (outbox) await this.state.outbox.remove(outbox);
    if (!current || current.message_state !== 'queued') return;
    const refused = outcomes.find((o) => !o.ok);
    // A message_payload submit is one PDU, one id and one receipt for the whole text: the
    // record then follows one part, whatever its units.
    const tracked = current.parts.slice(0, Math.max(1, outcomes.length));
    const parts = tracked.map((part, k) => {
      const outcome = outcomes[k];
      if (!outcome) return part;
      return outcome.ok
        ? { ...part, carrier_id: outcome.messageId, state: 'sent' as const }
        : { ...part, state: 'failed' as const, error_code: refusalCode(outcome) };
    });
    const next: MessageRecord = {
      ...current,
      carrier,
      parts,
      updated_time: this.options.scheduler.now(),
      sent_time: outcomes.some((o) => o.ok) ? sentAt : null,
      message_state: refused ? 'failed' : 'sent',
      error_code: refused ? refusalCode(refused) : null,
      error_message: refused && !refused.ok ? refused.error : null,
    };
    await this.states.save(next, current);
    if (refused) this.options.metrics.finished(next);
    else this.options.metrics.sent(next);
  }

  /** Fails a message before it is sent; the caller holds the message's lock. */
  private async fail(entry: OutboxRecord, code: string, reason: string): Promise<void> {
    {
      const current = await this.state.messages.get(entry.account, entry.message_uuid);
      await this.state.outbox.remove(entry);
      if (!current || FINAL_STATES.has(current.message_state)) return;
      const now = this.options.scheduler.now();
      const next: MessageRecord = {
        ...current,
        message_state: 'failed',
        error_code: code,
        error_message: reason,
        updated_time: now,
        parts: current.parts.map((p) => ({ ...p, state: 'failed', error_code: code })),
      };
      // Its warning (message-log.ts) names the code and the reason.
      await this.states.save(next, current);
      this.options.metrics.finished(next);
    }
  }
}

function refusalCode(outcome: PartOutcome): string {
  if (outcome.ok) return '000';
  if (outcome.expired) return '420';
  return (outcome.commandStatus !== null && REFUSAL_CODES.get(outcome.commandStatus)) || '300';
}
