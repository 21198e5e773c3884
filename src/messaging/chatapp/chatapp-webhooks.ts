import { createHmac } from 'node:crypto';
import { sameSecret } from '../../core/same-secret.js';
import type { ChatAppAccountRecord } from '../../state/records.js';
import type { State } from '../../state/state.js';
import { newUuid } from '../../core/ids.js';
import type { InboundSms } from '../inbound-messages.js';
import { storeInboundMedia, type InboundMediaSink } from '../mms/inbound-media.js';
import type { GraphClient } from './graph-client.js';
import type { ChatAppStatus, MessageLog } from '../message-pipeline.js';
import { CHATAPP_CARRIER } from './chatapp-channel.js';
import type { ChatAppTemplates } from './chatapp-templates.js';

/** Upstream's own limit for the media a customer sends is 100 MB (documents); video 16 MB. */
const MAX_INBOUND_MEDIA_BYTES = 100 * 1024 * 1024;

export type WebhookOutcome = 'accepted' | 'unauthorized' | 'malformed';

interface Change {
  field?: unknown;
  value?: Record<string, unknown>;
}

export interface ChatAppWebhooksOptions {
  state: State;
  templates: ChatAppTemplates;
  /** A sent message's status (statuses[] of the messages field); resolves once recorded. */
  onStatus(status: ChatAppStatus): Promise<void>;
  /** An inbound chat message (messages[]); resolves once recorded. */
  onInbound(message: InboundSms): Promise<void>;
  /** Downloads the media customers send. */
  graph: GraphClient;
  /** Where their media are kept. */
  media: InboundMediaSink;
  log: MessageLog;
}

/**
 * What upstream sends to `/v1/ChatApp/Webhook/{biz_account_id}/`: the subscription check, and
 * POSTs signed with the business account's app secret (X-Hub-Signature-256 over the raw body).
 * A POST that does not verify changes nothing.
 */
export class ChatAppWebhooks {
  constructor(private readonly options: ChatAppWebhooksOptions) {}

  /** The challenge to echo when the check names the account's verify token; null otherwise. */
  async subscribe(
    bizAccountId: string,
    query: { mode?: string; verifyToken?: string; challenge?: string },
  ): Promise<string | null> {
    const account = await this.account(bizAccountId);
    if (!account || query.mode !== 'subscribe' || query.challenge === undefined) return null;
    return sameSecret(query.verifyToken ?? '', account.verify_token) ? query.challenge : null;
  }

  async receive(
    bizAccountId: string,
    raw: Buffer,
    signature: string | undefined,
  ): Promise<WebhookOutcome> {
    const account = await this.account(bizAccountId);
    const expected = account
      ? `sha256=${createHmac('sha256', account.app_secret).update(raw).digest('hex')}`
      : '';
    if (!account || !sameSecret(signature ?? '', expected)) {
      this.options.log.warn(
        { biz_account_id: bizAccountId, bytes: raw.length },
        'chat-app webhook refused: the signature does not verify',
      );
      return 'unauthorized';
    }
    let body: { entry?: { id?: unknown; changes?: Change[] }[] };
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      // Never the content: it may carry messages and numbers.
      this.options.log.warn(
        { biz_account_id: bizAccountId, bytes: raw.length },
        'chat-app webhook body is not JSON',
      );
      return 'malformed';
    }
    if (!Array.isArray(body?.entry)) return 'malformed';
    for (const entry of body.entry) {
      if (String(entry?.id) !== account.biz_account_id) {
        this.options.log.warn(
          { biz_account_id: bizAccountId },
          'chat-app webhook entry for another business account ignored',
        );
        continue;
      }
      for (const change of Array.isArray(entry.changes) ? entry.changes : [])
        await this.change(account, change);
    }
    return 'accepted';
  }

  private async change(account: ChatAppAccountRecord, change: Change): Promise<void> {
    const value = change.value ?? {};
    const templateId = value.message_template_id;
    switch (change.field) {
      case 'message_template_status_update':
        if (templateId === undefined || typeof value.event !== 'string') return;
        await this.options.templates.review(account, {
          templateId: String(templateId),
          status: value.event,
          ...(typeof value.reason === 'string' ? { reason: value.reason } : {}),
        });
        return;
      case 'message_template_quality_update':
        if (templateId === undefined || typeof value.new_quality_score !== 'string') return;
        await this.options.templates.review(account, {
          templateId: String(templateId),
          qualityScore: value.new_quality_score,
        });
        return;
      case 'messages': {
        const statuses = Array.isArray(value.statuses) ? (value.statuses as ChatAppStatus[]) : [];
        for (const status of statuses)
          if (typeof status?.id === 'string' && typeof status.status === 'string')
            await this.options.onStatus(status);
        const messages = Array.isArray(value.messages) ? (value.messages as Json[]) : [];
        for (const message of messages) {
          const inbound = inboundOf(account, value, message);
          if (inbound)
            await this.options.onInbound(await this.withMedia(account, inbound, message));
          else
            this.options.log.warn(
              { biz_account_id: account.biz_account_id },
              'inbound chat-app message for a number this account does not hold: dropped',
            );
        }
        return;
      }
      default:
        this.options.log.info(
          { biz_account_id: account.biz_account_id, field: String(change.field) },
          'chat-app webhook field not handled',
        );
    }
  }

  /** An image, video, audio, document or sticker: downloaded into the media store. */
  private async withMedia(
    account: ChatAppAccountRecord,
    inbound: InboundSms,
    message: Json,
  ): Promise<InboundSms> {
    const mediaId = ((message[String(message.type)] ?? {}) as Json).id;
    if (inbound.params?.ContentType !== 'media' || typeof mediaId !== 'string') return inbound;
    const number = await this.options.state.numbers.findByUnique({
      space: 'number',
      value: inbound.to,
    });
    if (!number) return inbound;
    try {
      const file = await this.options.graph.downloadMedia(
        { accessToken: account.access_token },
        mediaId,
        MAX_INBOUND_MEDIA_BYTES,
      );
      const messageUuid = newUuid();
      const params = await storeInboundMedia(this.options.media, number, messageUuid, [file]);
      return { ...inbound, messageUuid, params: { ...inbound.params, ...params } };
    } catch (error) {
      this.options.log.warn(
        { biz_account_id: account.biz_account_id, err: (error as Error).message },
        'inbound chat-app media not downloaded; the message goes on without it',
      );
      return inbound;
    }
  }

  private account(bizAccountId: string): Promise<ChatAppAccountRecord | null> {
    return this.options.state.chatAppAccounts.findByUnique({
      space: 'chatapp_account',
      value: bizAccountId,
    });
  }
}

type Json = Record<string, unknown>;

/** An inbound chat message as the message_url hears of it (wire-compat-messaging.md). */
function inboundOf(account: ChatAppAccountRecord, value: Json, message: Json): InboundSms | null {
  const phoneId = (value.metadata as Json | undefined)?.phone_number_id;
  const to = account.phone_numbers.find((p) => p.phone_number_id === phoneId)?.number;
  if (!to || typeof message.from !== 'string') return null;
  const { contentType, body, params } = contentOf(message);
  return {
    carrier: CHATAPP_CARRIER,
    from: message.from,
    to,
    text: body,
    units: 1,
    type: 'chatapp',
    params: { Body: body, ContentType: contentType, ...params },
  };
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

function contentOf(message: Json): {
  contentType: string;
  body: string;
  params: Record<string, string>;
} {
  const part = (message[String(message.type)] ?? {}) as Json;
  switch (message.type) {
    case 'text':
      return { contentType: 'text', body: text(part.body), params: {} };
    case 'button':
      return {
        contentType: 'button',
        body: text(part.text),
        params: { ButtonPayload: text(part.payload) },
      };
    case 'interactive': {
      const reply = (part.button_reply ?? part.list_reply ?? {}) as Json;
      return {
        contentType: 'button',
        body: text(reply.title),
        params: { ButtonPayload: text(reply.id) },
      };
    }
    case 'location':
      return {
        contentType: 'location',
        body: text(part.name) || text(part.address),
        params: {
          Latitude: String(part.latitude ?? ''),
          Longitude: String(part.longitude ?? ''),
          LocationName: text(part.name),
          LocationAddress: text(part.address),
        },
      };
    case 'image':
    case 'video':
    case 'audio':
    case 'document':
    case 'sticker':
      return {
        contentType: 'media',
        body: text(part.caption),
        params: { MediaType: String(message.type), MediaContentType: text(part.mime_type) },
      };
    default:
      return { contentType: 'unknown', body: '', params: {} };
  }
}
