import type { Scheduler } from '../core/scheduler.js';
import { invalidParameter } from '../core/errors.js';
import type { ChatAppAccountRecord, MessageRecord, OutboxRecord } from '../state/records.js';
import type { State } from '../state/state.js';
import type { ChatAppChannel } from './chatapp/chatapp-channel.js';
import {
  describeContent,
  templateParameterProblem,
  type ChatAppContent,
} from './chatapp/chatapp-send.js';
import type { MessageMetrics } from './message-metrics.js';
import type { MessageRateDeck } from './message-rate-deck.js';
import type { MessageStates } from './message-states.js';
import type { MessageSender } from './message-pipeline.js';
import type { MmsChannel } from './mms/mms-channel.js';
import { newMessage } from './new-message.js';
import { pickPowerpackSender } from './powerpack-sender.js';
import type { RefusedMessages } from './refused-messages.js';
import type { ChatAppSendRequest, MmsSendRequest, SendRequest } from './send-request.js';
import { smsPartCount } from './sms/sms-plan.js';

export interface MessageIntakeOptions {
  state: State;
  deck: MessageRateDeck;
  scheduler: Scheduler;
  metrics: MessageMetrics;
  smartEncoding: boolean;
  chatApp: ChatAppChannel | null;
  mms: MmsChannel;
  states: MessageStates;
  refused: RefusedMessages;
  /** Queues a message for sending, one job per message. */
  enqueue(account: string, uuid: string): Promise<void>;
}

/**
 * Taking a send request in: who may send from what, the records and outbox entries written
 * and durable before the answer, and the messages queued.
 */
export class MessageIntake {
  constructor(private readonly options: MessageIntakeOptions) {}

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
    const account = await this.options.state.chatAppAccounts.findByUnique({
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
    const templates = await this.options.state.chatAppTemplates.all(
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
      await Promise.all(messages.map((m) => this.options.state.outbox.create(m.outbox)));
      await Promise.all(messages.map((m) => this.options.state.messages.create(m.record)));
      await this.options.state.store.durable();
      await Promise.all(
        messages.map((m) => this.options.enqueue(m.record.account, m.record.message_uuid)),
      );
    } catch (error) {
      this.options.refused.refuse(messages.map((m) => m.record));
      throw error;
    }
    for (const { record } of messages) {
      this.options.metrics.accepted(record);
      this.options.states.accepted(record);
    }
    return messages.map((m) => m.record.message_uuid);
  }

  /** A number sent from must be one the sender holds (a subaccount: its own). */
  private async checkSenderNumber(sender: MessageSender, src: string): Promise<void> {
    const number = await this.options.state.numbers.get(sender.account, src);
    const visible =
      number && (sender.subaccount === null || number.subaccount === sender.subaccount);
    if (!visible) throw invalidParameter(`src ${src} is not a number of this account`);
  }

  /** The sender of each destination: src itself, or a number of the powerpack's pool. */
  private async resolveSources(sender: MessageSender, request: SendRequest): Promise<string[]> {
    if (request.src !== null) {
      if (request.senderKind === 'number') await this.checkSenderNumber(sender, request.src);
      return request.destinations.map(() => request.src!);
    }
    const powerpack = await this.options.state.powerpacks.get(
      sender.account,
      request.powerpackUuid!,
    );
    if (!powerpack || (sender.subaccount !== null && powerpack.subaccount !== sender.subaccount))
      throw invalidParameter(
        `powerpack_uuid ${request.powerpackUuid} is not a powerpack of this account`,
      );
    const sources: string[] = [];
    for (const destination of request.destinations) {
      const number = await pickPowerpackSender(this.options.state, powerpack, destination);
      if (!number) throw invalidParameter(`powerpack ${powerpack.uuid} has no number to send from`);
      sources.push(number);
    }
    return sources;
  }
}
