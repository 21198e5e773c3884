import type { Mm7Settings } from '../../config/config.js';
import { basicCredentials } from '../../core/authorization-header.js';
import type { Clock } from '../../core/clock.js';
import { newUuid } from '../../core/ids.js';
import { sameSecret } from '../../core/same-secret.js';
import type { State } from '../../state/state.js';
import type { InboundMessages } from '../inbound-messages.js';
import type { MessageLog, MessagePipeline } from '../message-pipeline.js';
import type { DeliveryReceipt } from '../sms/delivery-receipt.js';
import { storeInboundMedia } from './inbound-media.js';
import type { MediaStore } from './media-store.js';
import {
  encodeDeliverRsp,
  encodeDeliveryReportRsp,
  Mm7Error,
  mm7RequestKind,
  parseDeliverReq,
  parseDeliveryReportReq,
  type Mm7Part,
} from './mm7-codec.js';
import { MM7_CARRIER } from './mm7-carrier.js';

/** TS 23.140 MMStatus → the message's outcome and error code (wire-compat-messaging.md). */
const MM_STATUS: Record<string, Pick<DeliveryReceipt, 'outcome' | 'errorCode' | 'stat'>> = {
  Retrieved: { outcome: 'delivered', errorCode: '000', stat: 'DELIVRD' },
  Forwarded: { outcome: 'delivered', errorCode: '000', stat: 'DELIVRD' },
  Expired: { outcome: 'undelivered', errorCode: '420', stat: 'EXPIRED' },
  Rejected: { outcome: 'undelivered', errorCode: '30', stat: 'REJECTD' },
  Unrecognised: { outcome: 'undelivered', errorCode: '50', stat: 'UNDELIV' },
  DeliveryConditionNotMet: { outcome: 'undelivered', errorCode: '30', stat: 'UNDELIV' },
  Indeterminate: { outcome: 'pending', errorCode: '000', stat: 'UNKNOWN' },
  Deferred: { outcome: 'pending', errorCode: '000', stat: 'ENROUTE' },
};

export interface Mm7InboundOptions {
  state: State;
  store: MediaStore;
  pipeline: MessagePipeline;
  inbound: InboundMessages;
  mm7: Mm7Settings | null;
  clock: Clock;
  /** The URL an application fetches a media file at. */
  mediaUrl(authId: string, messageUuid: string, mediaId: string): string;
  log: MessageLog;
}

/** What the gateway answers: the HTTP status and the SOAP envelope (or an error text). */
export interface Mm7Answer {
  status: number;
  contentType: string;
  body: string;
}

/**
 * What the MMSC sends the gateway over MM7 (`/v1/MM7/`, Basic auth with the MM7
 * credentials): delivery reports for sent MMS, and inbound MMS (DeliverReq), whose media go to
 * the media store and whose request to the application's message_url names them.
 */
export class Mm7Inbound {
  constructor(private readonly options: Mm7InboundOptions) {}

  authorized(header: string | undefined): boolean {
    const mm7 = this.options.mm7;
    if (!mm7) return false;
    const given = basicCredentials(header);
    const presented = given ? `${given.user}:${given.password}` : '';
    return sameSecret(presented, `${mm7.username}:${mm7.password}`);
  }

  async handle(contentType: string, body: Buffer): Promise<Mm7Answer> {
    try {
      const xml = body.toString('utf8');
      const kind = /multipart\//i.test(contentType) ? 'DeliverReq' : mm7RequestKind(xml);
      if (kind === 'DeliveryReportReq') return await this.report(xml);
      if (kind === 'DeliverReq') return await this.deliver(contentType, body);
      this.options.log.warn({ kind, bytes: body.length }, 'MM7 request not understood');
      return plain(400, `not an MM7 request this gateway takes (${kind})`);
    } catch (error) {
      if (!(error instanceof Mm7Error)) throw error;
      // Never the content: it may carry a subscriber's message.
      this.options.log.warn({ err: error.message, bytes: body.length }, 'MM7 request malformed');
      return plain(400, `malformed MM7 request: ${error.message}`);
    }
  }

  private async report(xml: string): Promise<Mm7Answer> {
    const report = parseDeliveryReportReq(xml);
    const mapped = MM_STATUS[report.mmStatus] ?? {
      outcome: 'undelivered' as const,
      errorCode: '1000',
      stat: 'UNKNOWN',
    };
    await this.options.pipeline.receipt(MM7_CARRIER, {
      messageId: report.messageId,
      ...mapped,
      err: report.statusText ?? null,
      doneDate: null,
    });
    return soap(encodeDeliveryReportRsp(report.transactionId));
  }

  private async deliver(contentType: string, body: Buffer): Promise<Mm7Answer> {
    const { state, store, inbound, log } = this.options;
    const request = parseDeliverReq(contentType, body);
    const to = request.recipients[0] ?? '';
    const number = await state.numbers.findByUnique({ space: 'number', value: to });
    if (!number) {
      log.warn({ to }, 'inbound MMS to a number nobody holds: dropped');
      return soap(encodeDeliverRsp(request.transactionId));
    }
    const messageUuid = newUuid();
    const text = request.parts
      .filter((p) => /^text\/plain/i.test(p.contentType))
      .map((p) => p.body.toString('utf8'))
      .join('\n');
    const params = await storeInboundMedia(
      { state, store, mediaUrl: this.options.mediaUrl },
      { account: number.account, subaccount: number.subaccount, created: this.options.clock.now() },
      messageUuid,
      request.parts
        .filter(isMedia)
        .map((p) => ({ contentType: p.contentType, body: p.body, fileName: p.filename })),
    );
    await inbound.receive({
      carrier: MM7_CARRIER,
      from: request.sender,
      to,
      text,
      units: 1,
      type: 'mms',
      messageUuid,
      params,
    });
    return soap(encodeDeliverRsp(request.transactionId));
  }
}

/** The text and the SMIL layout are not media an application fetches. */
function isMedia(part: Mm7Part): boolean {
  return !/^(text\/plain|application\/smil)/i.test(part.contentType);
}

function plain(status: number, body: string): Mm7Answer {
  return { status, contentType: 'text/plain', body };
}

function soap(body: string): Mm7Answer {
  return { status: 200, contentType: 'text/xml; charset=utf-8', body };
}
