import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ChatAppAccountRecord } from '../../state/records.js';
import type { State } from '../../state/state.js';
import type { ChatAppStatus, MessageLog } from '../message-pipeline.js';
import type { ChatAppTemplates } from './chatapp-templates.js';

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
        if (Array.isArray(value.messages) && value.messages.length > 0)
          this.options.log.info(
            { biz_account_id: account.biz_account_id, messages: value.messages.length },
            'inbound chat-app messages are not routed yet',
          );
        return;
      }
      default:
        this.options.log.info(
          { biz_account_id: account.biz_account_id, field: String(change.field) },
          'chat-app webhook field not handled',
        );
    }
  }

  private account(bizAccountId: string): Promise<ChatAppAccountRecord | null> {
    return this.options.state.chatAppAccounts.findByUnique({
      space: 'chatapp_account',
      value: bizAccountId,
    });
  }
}

/** Constant-time equality of two secrets of any length. */
function sameSecret(given: string, expected: string): boolean {
  const a = createHmac('sha256', 'compare').update(given).digest();
  const b = createHmac('sha256', 'compare').update(expected).digest();
  return timingSafeEqual(a, b) && expected.length > 0;
}
