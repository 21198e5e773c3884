import type { CallbackDelivery, CallbackReport } from '../callbacks/index.js';
import { MESSAGE_CALLBACK_RETRY_DELAYS_SECONDS } from '../callbacks/index.js';
import { newUuid } from '../core/ids.js';
import { countryOf } from '../core/phone-number.js';
import type { Scheduler } from '../core/scheduler.js';
import type { MessageRecord, NumberRecord } from '../state/records.js';
import { numberApplication } from '../state/number-application.js';
import type { State } from '../state/state.js';
import { KeyedTurns } from '../core/keyed-turns.js';
import type { MessageMetrics } from './message-metrics.js';
import type { MessageLog, MessagePipeline } from './message-pipeline.js';
import { parseMessageReplies } from './message-reply.js';
import { applyIntent, messageIntent } from './opt-out.js';
import { parseSendRequest } from './send-request.js';
import { MESSAGE_CALLBACK_TIMEOUT_MS } from './status-callback.js';

/** An inbound message as the carrier side hands it over: SMS parts already joined. */
export interface InboundSms {
  carrier: string;
  /** The sender, as the carrier wrote it (digits, or an alphanumeric id). */
  from: string;
  /** The service number it was sent to. */
  to: string;
  text: string;
  units: number;
  /** sms unless said otherwise. */
  type?: 'sms' | 'chatapp' | 'mms';
  /** The record's uuid when the carrier side chose it (MMS media are stored under it first). */
  messageUuid?: string;
  /** Parameters of the message_url request beside the common ones (chat-app: Body...). */
  params?: Record<string, string>;
}

export interface InboundMessagesOptions {
  state: State;
  /** Reads the message_url's answer (the delegate of this delivery calls back here). */
  callbacks: CallbackDelivery;
  pipeline: MessagePipeline;
  scheduler: Scheduler;
  log: MessageLog;
  metrics: MessageMetrics;
}

const ZERO = '0.00000';

/**
 * Inbound messages: a record for each, opt-out keywords applied, and a signed request to the
 * number's application `message_url`; delivered when it answers 2xx (a `<Message>` in the
 * answer is sent as a reply), undelivered when every retry failed.
 */
export class InboundMessages {
  private readonly locks = new KeyedTurns();

  constructor(private readonly options: InboundMessagesOptions) {}

  /** Resolves once the message is recorded: the carrier may be acknowledged then. */
  async receive(sms: InboundSms): Promise<void> {
    const { state, scheduler, log } = this.options;
    const to = digitsOf(sms.to);
    const from = digitsOf(sms.from) || sms.from;
    const number = await state.numbers.findByUnique({ space: 'number', value: to });
    if (!number) {
      log.warn({ carrier: sms.carrier, to }, 'inbound message to a number nobody holds: dropped');
      return;
    }
    const now = scheduler.now();
    const intent = messageIntent(sms.text);
    await applyIntent(state, number, to, from, intent, sms.text, now);
    const record = inboundRecord(number, from, to, sms, intent, now);
    await state.messages.create(record);
    this.options.metrics.received(record);
    await this.notify(number, record, sms.text, sms.params);
  }

  /** The delivery's delegate: the application answered 2xx. */
  async delivered(report: CallbackReport): Promise<void> {
    const context = report.request.context;
    if (context?.kind !== 'inbound_message') return;
    await this.finish(context.account!, context.message_uuid!, 'delivered');
    if (report.body) await this.reply(context.account!, context.message_uuid!, report.body);
  }

  /** The delivery's delegate: every attempt failed. */
  async gaveUp(report: CallbackReport): Promise<void> {
    const context = report.request.context;
    if (context?.kind !== 'inbound_message') return;
    await this.finish(context.account!, context.message_uuid!, 'undelivered');
  }

  private async notify(
    number: NumberRecord,
    record: MessageRecord,
    text: string,
    extra: Record<string, string> = {},
  ) {
    const { state, callbacks, log } = this.options;
    const app = await numberApplication(state, number);
    if (!app?.message_url) {
      log.info(
        { message_uuid: record.message_uuid, to: number.number },
        'inbound message recorded; the number has no application message_url',
      );
      return;
    }
    const params: Record<string, string> = {
      From: record.from_number,
      To: record.to_number,
      Type: record.message_type,
      MessageUUID: record.message_uuid,
      Text: text,
      Units: String(record.units),
      TotalRate: record.total_rate,
      TotalAmount: record.total_amount,
      MessageIntent: record.message_intent,
      MediaCount: '0',
      ...extra,
    };
    void callbacks
      .send({
        url: app.message_url,
        method: app.message_method === 'GET' ? 'GET' : 'POST',
        params,
        accountId: number.subaccount ?? number.account,
        retryDelaysSeconds: [...MESSAGE_CALLBACK_RETRY_DELAYS_SECONDS],
        timeoutMs: MESSAGE_CALLBACK_TIMEOUT_MS,
        context: {
          kind: 'inbound_message',
          account: record.account,
          message_uuid: record.message_uuid,
        },
      })
      .catch((error: Error) =>
        log.warn(
          { message_uuid: record.message_uuid, err: error.message },
          'message_url not called',
        ),
      );
  }

  private finish(account: string, uuid: string, state: 'delivered' | 'undelivered') {
    return this.locks.run(uuid, async () => {
      const current = await this.options.state.messages.get(account, uuid);
      if (!current || current.message_state !== 'received') return;
      const next: MessageRecord = {
        ...current,
        message_state: state,
        updated_time: this.options.scheduler.now(),
        ...(state === 'undelivered'
          ? { error_code: '300', error_message: 'the message_url did not answer 2xx' }
          : { error_code: '000' }),
      };
      await this.options.state.messages.update(next, current);
      this.options.metrics.finished(next);
    });
  }

  /** Sends each `<Message>` of the answer, from the number that received the message. */
  private async reply(account: string, uuid: string, body: string): Promise<void> {
    const { state, pipeline, log } = this.options;
    const inbound = await state.messages.get(account, uuid);
    if (!inbound) return;
    try {
      for (const reply of parseMessageReplies(body)) {
        const request = parseSendRequest({
          src: reply.src ?? inbound.to_number,
          dst: reply.dst ?? inbound.from_number,
          text: reply.text,
          type: reply.type,
          url: reply.callbackUrl ?? undefined,
          method: reply.callbackMethod ?? undefined,
        });
        await pipeline.accept(
          {
            account: inbound.account,
            subaccount: inbound.subaccount,
            authId: inbound.subaccount ?? inbound.account,
            requesterIp: null,
          },
          request,
        );
      }
    } catch (error) {
      log.warn(
        { message_uuid: uuid, err: (error as Error).message },
        'the message_url answer could not be sent as a reply',
      );
    }
  }
}

function inboundRecord(
  number: NumberRecord,
  from: string,
  to: string,
  sms: InboundSms,
  intent: string,
  now: number,
): MessageRecord {
  return {
    account: number.account,
    subaccount: number.subaccount,
    created: now,
    message_uuid: sms.messageUuid ?? newUuid(),
    message_direction: 'inbound',
    message_type: sms.type ?? 'sms',
    message_state: 'received',
    from_number: from,
    to_number: to,
    text: sms.text,
    units: sms.units,
    total_rate: ZERO,
    total_amount: ZERO,
    carrier_fees_rate: ZERO,
    carrier_fees: ZERO,
    error_code: null,
    error_message: null,
    powerpack_id: null,
    destination_country_iso2: countryOf(to),
    destination_network: null,
    requester_ip: null,
    is_domestic: countryOf(from) === countryOf(to),
    replaced_sender: null,
    log: 'true',
    trackable: false,
    message_intent: intent,
    conversation_id: null,
    conversation_origin: null,
    conversation_expiration_timestamp: null,
    carrier: sms.carrier,
    sent_time: null,
    delivery_report_time: null,
    updated_time: now,
    expires_at: null,
    callback_url: null,
    callback_method: 'POST',
    callback_sequence: 0,
    parts: [],
  };
}

function digitsOf(address: string): string {
  return address
    .trim()
    .replace(/^\+/, '')
    .replace(/[\s\-.()]/g, '');
}
