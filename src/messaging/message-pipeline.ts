import { join } from 'node:path';
import type { CallbackDelivery, RetryQueue } from '../callbacks/index.js';
import { PeriodicSweep } from '../core/periodic-sweep.js';
import { countryOf } from '../core/phone-number.js';
import type { Scheduler } from '../core/scheduler.js';
import { isTollFree } from '../tollfree/verification-rules.js';
import { invalidParameter } from '../core/errors.js';
import type { ChatAppAccountRecord, MessageRecord, OutboxRecord } from '../state/records.js';
import type { State } from '../state/state.js';
import type { CarrierNetwork, PartOutcome } from './carrier-network.js';
import { CarrierMessageIds } from './carrier-message-ids.js';
import { MessageLocks } from './message-locks.js';
import { SentLedger, type SentEntry } from './sent-ledger.js';
import { RefusedMessages } from './refused-messages.js';
import { loggedNumber } from './message-log.js';
import type { MessageMetrics } from './message-metrics.js';
import type { MessageRateDeck } from './message-rate-deck.js';
import { optOutId } from './opt-out.js';
import { pickPowerpackSender } from './powerpack-sender.js';
import type { ChatAppSendRequest, MmsSendRequest, SendRequest } from './send-request.js';
import type { MmsChannel } from './mms/mms-channel.js';
import { newMessage } from './new-message.js';
import { CHATAPP_CARRIER, type ChatAppChannel } from './chatapp/chatapp-channel.js';
import {
  chatAppStep,
  chatAppSteps,
  conversationOf,
  type ChatAppStatus,
} from './chatapp/chatapp-status.js';
import {
  describeContent,
  templateParameterProblem,
  type ChatAppContent,
} from './chatapp/chatapp-send.js';
import { planSms, smsPartCount } from './sms/sms-plan.js';
import type { DeliveryReceipt } from './sms/delivery-receipt.js';
import { statusCallback } from './status-callback.js';
import type { AccountLimiter } from '../limits/account-limiter.js';

/** Who sends: the tenant (main account) and the account acting, main or subaccount. */
export interface MessageSender {
  account: string;
  subaccount: string | null;
  authId: string;
  requesterIp: string | null;
}

/** What the send queue holds: only ids, never a number or a text. */
export interface SendJob {
  account: string;
  message_uuid: string;
}

export interface MessageLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
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

/** Wire-compat error codes for a part the carrier refused, by SMPP command_status. */
const REFUSAL_CODES = new Map<number, string>([
  [0x01, '110'], // ESME_RINVMSGLEN
  [0x0a, '40'], // ESME_RINVSRCADR
  [0x0b, '50'], // ESME_RINVDSTADR
  [0x45, '300'], // ESME_RSUBMITFAIL
  [0x61, '100'], // ESME_RINVSCHED (refused by the carrier's rules)
  [0x65, '100'], // ESME_RX_R_APPN: permanent refusal
]);

/** How long an unknown receipt id is looked up again, step by step (2.3 s in all). */
const RECEIPT_GRACE_MS = [50, 250, 2000];

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
  private readonly locks = new MessageLocks();
  readonly carrierIds: CarrierMessageIds;
  private readonly carrierIdSweep: PeriodicSweep;
  private readonly sentLedger: SentLedger;
  private readonly refused: RefusedMessages;
  private readonly owedRecords: PeriodicSweep;
  private lastOwedError: string | null = null;
  private closed = false;

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
  async accept(
    sender: MessageSender,
    request: SendRequest | ChatAppSendRequest | MmsSendRequest,
  ): Promise<string[]> {
    if (request.type === 'chatapp') return this.acceptChatApp(sender, request);
    if (request.type === 'mms') return this.acceptMms(sender, request);
    const sources = await this.resolveSources(sender, request);
    const units = smsPartCount(request.text, { smartEncoding: this.options.smartEncoding });
    const admitted = request.destinations.map((destination, k) => {
      const rate = this.options.deck.rateFor(destination);
      return newMessage(this.options.scheduler.now(), sender, request, {
        type: 'sms',
        source: sources[k]!,
        destination,
        text: request.text,
        units,
        ratePerUnit: rate?.ratePerUnit ?? '0',
        feePerUnit: rate?.carrierFeePerUnit ?? '0',
        powerpackUuid: request.powerpackUuid,
      });
    });
    return this.admit(admitted);
  }

  /** A chat-app send: from a number of a business account of the sender, one unit each. */
  private async acceptChatApp(
    sender: MessageSender,
    request: ChatAppSendRequest,
  ): Promise<string[]> {
    if (!this.options.chatApp) throw invalidParameter('chat-app messages are not configured');
    const account = await this.state.chatAppAccounts.findByUnique({
      space: 'chatapp_number',
      value: request.src,
    });
    const visible =
      account &&
      account.account === sender.account &&
      (sender.subaccount === null || account.subaccount === sender.subaccount);
    if (!visible)
      throw invalidParameter(
        `src ${request.src} is not a number of a chat-app business account of this account`,
      );
    if (request.content.kind === 'template') await this.checkTemplate(account, request.content);
    const text = describeContent(request.content);
    const admitted = request.destinations.map((destination) => {
      const message = newMessage(this.options.scheduler.now(), sender, request, {
        type: 'chatapp',
        source: request.src,
        destination,
        text,
        units: 1,
        ratePerUnit: '0',
        feePerUnit: '0',
        powerpackUuid: null,
      });
      message.outbox.chatapp = request.content as OutboxRecord['chatapp'];
      return message;
    });
    return this.admit(admitted);
  }

  /** An MMS: its media are fetched and stored once for all its destinations before the answer. */
  private async acceptMms(sender: MessageSender, request: MmsSendRequest): Promise<string[]> {
    if (!this.options.mms.configured)
      throw invalidParameter('type mms: no MMSC is configured (VOXGATE_MMS_MM7_URL)');
    if (request.senderKind === 'number') await this.checkSenderNumber(sender, request.src);
    const media = await this.options.mms.prepare(request.mediaUrls);
    const admitted = request.destinations.map((destination) => {
      const rate = this.options.deck.rateFor(destination);
      const message = newMessage(this.options.scheduler.now(), sender, request, {
        type: 'mms',
        source: request.src,
        destination,
        text: request.text,
        units: 1,
        ratePerUnit: rate?.ratePerUnit ?? '0',
        feePerUnit: rate?.carrierFeePerUnit ?? '0',
        powerpackUuid: null,
      });
      message.outbox.mms = true;
      return message;
    });
    for (const { record } of admitted) await this.options.mms.attach(record, media);
    return this.admit(admitted);
  }

  /** A template message names a template of the business account that upstream approved. */
  private async checkTemplate(
    account: ChatAppAccountRecord,
    content: Extract<ChatAppContent, { kind: 'template' }>,
  ): Promise<void> {
    const templates = await this.state.chatAppTemplates.all(
      account.account,
      `biz:${account.biz_account_id}`,
    );
    const template = templates.find(
      (t) => t.name === content.name && t.language === content.language,
    );
    if (!template)
      throw invalidParameter(
        `template ${content.name} (${content.language}) is not a template of business account ${account.biz_account_id}`,
      );
    if (template.status !== 'APPROVED')
      throw invalidParameter(
        `template ${content.name} (${content.language}) is ${template.status}: only an APPROVED template can be sent`,
      );
    const problem = templateParameterProblem(content.components, template.components);
    if (problem) throw invalidParameter(problem);
  }

  /**
   * Writes the records and outbox entries, durable before the answer, then queues them. When
   * any of that fails the client is told the messages were not taken, so whatever of it the
   * store may still carry out is withdrawn, and nothing of it is sent.
   */
  private async admit(messages: { record: MessageRecord; outbox: OutboxRecord }[]) {
    try {
      await Promise.all(messages.map((m) => this.state.outbox.create(m.outbox)));
      await Promise.all(messages.map((m) => this.state.messages.create(m.record)));
      await this.state.store.durable();
      await Promise.all(messages.map((m) => this.enqueue(m.record.account, m.record.message_uuid)));
    } catch (error) {
      this.refused.refuse(messages.map((m) => m.record));
      throw error;
    }
    for (const { record } of messages) {
      this.options.metrics.accepted(record);
      this.sendStatus(record);
    }
    return messages.map((m) => m.record.message_uuid);
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
    const unverified = await this.tollFreeRefusal(entry);
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

  /**
   * Carriers refuse messages from a toll-free number to US and Canadian numbers unless its
   * verification is APPROVED: such a message fails here, before any carrier sees it.
   */
  private async tollFreeRefusal(
    entry: OutboxRecord,
  ): Promise<{ code: string; reason: string } | null> {
    if (!isTollFree(entry.src)) return null;
    const country = countryOf(entry.dst);
    if (country !== 'US' && country !== 'CA') return null;
    const requests = await this.state.tollfreeVerifications.all(
      entry.account,
      `number:${entry.src}`,
    );
    if (requests.some((r) => r.status === 'APPROVED')) return null;
    const latest = requests.sort((a, b) => b.created - a.created)[0];
    const status = latest
      ? `its verification is ${latest.status}`
      : 'it has no verification request';
    return country === 'CA'
      ? {
          code: '201',
          reason: `toll-free ${entry.src} to a Canadian destination is blocked until its verification is APPROVED (${status})`,
        }
      : {
          code: '100',
          reason: `toll-free ${entry.src} is not verified (${status}): carriers refuse its messages to US and Canadian numbers`,
        };
  }

  /** An MMS to the MMSC; its message id is kept for the delivery report. */
  private async dispatchMms(entry: OutboxRecord): Promise<void> {
    const carrier = this.options.mms.carrier?.name ?? 'mms';
    const outcome = await this.options.mms.send(entry, this.options.scheduler.now());
    await this.recordHandedOver(entry, carrier, [outcome]);
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
    await this.locks.run(ref.message_uuid, async () => {
      let current = await this.state.messages.get(ref.account, ref.message_uuid);
      if (!current) return;
      const steps = chatAppSteps(current.message_state, status.status);
      const conversation = conversationOf(status, current);
      if (steps.length === 0 && conversation.conversation_id !== current.conversation_id)
        await this.save({ ...current, ...conversation }, current);
      for (const step of steps) {
        const next = chatAppStep(current, step, status, this.options.scheduler.now());
        current = await this.save(next, current);
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
    await this.locks.run(ref.message_uuid, async () => {
      const current = await this.state.messages.get(ref.account, ref.message_uuid);
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
      await this.save(next, current);
      if (next.message_state !== current.message_state) {
        this.options.metrics.finished(next);
        await this.carrierIds.forget(
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
    let ref = await this.carrierIds.find(carrier, carrierId);
    for (const waitMs of RECEIPT_GRACE_MS) {
      if (ref) break;
      await this.carrierIds.rememberedOrAfter(carrier, carrierId, waitMs);
      ref = await this.carrierIds.find(carrier, carrierId);
    }
    return ref;
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
    await this.save(next, current);
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
      await this.save(next, current);
      this.options.metrics.finished(next);
      this.options.log.info(
        {
          message_uuid: entry.message_uuid,
          to: loggedNumber(entry.dst, current.log as never),
          code,
        },
        `message failed: ${reason}`,
      );
    }
  }

  /** Writes a change of state and sends its status callback (Sequence counts per message). */
  private async save(next: MessageRecord, current: MessageRecord): Promise<MessageRecord> {
    const changed = next.message_state !== current.message_state;
    const record = changed ? { ...next, callback_sequence: current.callback_sequence + 1 } : next;
    await this.state.messages.update(record, current);
    if (changed) this.sendStatus(record);
    return record;
  }

  private sendStatus(record: MessageRecord): void {
    if (this.closed) return;
    const request = statusCallback(record, record.callback_sequence);
    if (!request) return;
    this.options.callbacks.send(request).catch((error: Error) => {
      this.options.log.warn(
        { message_uuid: record.message_uuid, err: error.message },
        'status callback not sent',
      );
    });
  }

  /** The sender of each destination: src itself, or a number of the powerpack's pool. */
  /** A number sent from must be one the sender holds (a subaccount: its own). */
  private async checkSenderNumber(sender: MessageSender, src: string): Promise<void> {
    const number = await this.state.numbers.get(sender.account, src);
    const visible =
      number && (sender.subaccount === null || number.subaccount === sender.subaccount);
    if (!visible) throw invalidParameter(`src ${src} is not a number of this account`);
  }

  private async resolveSources(sender: MessageSender, request: SendRequest): Promise<string[]> {
    if (request.src !== null) {
      if (request.senderKind === 'number') await this.checkSenderNumber(sender, request.src);
      return request.destinations.map(() => request.src!);
    }
    const powerpack = await this.state.powerpacks.get(sender.account, request.powerpackUuid!);
    if (!powerpack || (sender.subaccount !== null && powerpack.subaccount !== sender.subaccount))
      throw invalidParameter(
        `powerpack_uuid ${request.powerpackUuid} is not a powerpack of this account`,
      );
    const sources: string[] = [];
    for (const destination of request.destinations) {
      const number = await pickPowerpackSender(this.state, powerpack, destination);
      if (!number) throw invalidParameter(`powerpack ${powerpack.uuid} has no number to send from`);
      sources.push(number);
    }
    return sources;
  }
}

function refusalCode(outcome: PartOutcome): string {
  if (outcome.ok) return '000';
  if (outcome.expired) return '420';
  return (outcome.commandStatus !== null && REFUSAL_CODES.get(outcome.commandStatus)) || '300';
}
