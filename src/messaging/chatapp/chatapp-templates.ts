import {
  MESSAGE_CALLBACK_RETRY_DELAYS_SECONDS,
  type CallbackDelivery,
} from '../../callbacks/index.js';
import type { Clock } from '../../core/clock.js';
import { invalidParameter } from '../../core/errors.js';
import type { ChatAppAccountRecord, ChatAppTemplateRecord } from '../../state/records.js';
import type { State } from '../../state/state.js';
import { callbackTime } from '../message-times.js';
import type { GraphClient } from './graph-client.js';
import type { TemplateDraft } from './template-rules.js';

/** messaging document: "After a template is deleted, the same name cannot be reused for 30 days." */
export const NAME_COOLDOWN_MS = 30 * 24 * 60 * 60 * 1000;

/** Upstream edits only templates it has decided on; one in review or disabled stays as it is. */
const EDITABLE = new Set(['APPROVED', 'REJECTED', 'PAUSED']);
const STATUSES = new Set(['PENDING', 'APPROVED', 'REJECTED', 'PAUSED', 'DISABLED']);
const QUALITY_SCORES = new Set(['GREEN', 'YELLOW', 'RED', 'UNKNOWN']);

/** A review decision or quality change upstream reported for one template. */
export interface TemplateReview {
  templateId: string;
  /** APPROVED, REJECTED... absent for a quality change alone. */
  status?: string;
  reason?: string;
  qualityScore?: string;
}

export interface ChatAppTemplatesOptions {
  state: State;
  graph: GraphClient;
  /** Forwards review events to the business account's webhook_url, with retries. */
  callbacks: CallbackDelivery;
  clock: Clock;
}

const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Chat-app templates: each operation goes upstream first and is stored only once upstream
 * took it (an upstream failure changes nothing here); upstream's reviews move the stored
 * template and are forwarded, signed, to the business account's webhook_url.
 */
export class ChatAppTemplates {
  constructor(private readonly options: ChatAppTemplatesOptions) {}

  async create(
    account: ChatAppAccountRecord,
    draft: TemplateDraft,
  ): Promise<ChatAppTemplateRecord> {
    await this.checkNameFree(account, draft.name);
    const { state, clock, graph } = this.options;
    const upstream = await graph.createTemplate(credentials(account), account.biz_account_id, {
      name: draft.name,
      language: draft.language,
      category: draft.category,
      components: draft.components,
      ...(draft.allow_category_change === undefined
        ? {}
        : { allow_category_change: draft.allow_category_change }),
    });
    const now = clock.now();
    const record: ChatAppTemplateRecord = {
      account: account.account,
      subaccount: account.subaccount,
      created: now,
      modified: now,
      template_id: upstream.id,
      biz_account_id: account.biz_account_id,
      name: draft.name,
      language: draft.language,
      category: upstream.category ?? draft.category,
      allow_category_change: draft.allow_category_change ?? false,
      components: draft.components,
      status: STATUSES.has(upstream.status)
        ? (upstream.status as ChatAppTemplateRecord['status'])
        : 'PENDING',
      quality_score: null,
      rejected_reason: 'NONE',
    };
    await state.chatAppTemplates.create(record);
    return record;
  }

  /** New components (and category) for a decided template; it goes back to review. */
  async update(
    account: ChatAppAccountRecord,
    current: ChatAppTemplateRecord,
    draft: TemplateDraft,
  ): Promise<ChatAppTemplateRecord> {
    if (draft.name !== current.name || draft.language !== current.language)
      throw invalidParameter(
        `name and language of template ${current.template_id} are ${current.name} and ${current.language}: they cannot change (create a new template instead)`,
      );
    if (!EDITABLE.has(current.status))
      throw invalidParameter(
        `template ${current.template_id} is ${current.status}: only an APPROVED, REJECTED or PAUSED template can be edited`,
      );
    await this.options.graph.updateTemplate(credentials(account), current.template_id, {
      category: draft.category,
      components: draft.components,
    });
    const next: ChatAppTemplateRecord = {
      ...current,
      modified: this.options.clock.now(),
      category: draft.category,
      allow_category_change: draft.allow_category_change ?? current.allow_category_change,
      components: draft.components,
      status: 'PENDING',
      rejected_reason: 'NONE',
    };
    await this.options.state.chatAppTemplates.update(next, current);
    return next;
  }

  /** Deletes a template upstream and here; its name is then kept from reuse for 30 days. */
  async remove(
    account: ChatAppAccountRecord,
    template: ChatAppTemplateRecord,
    name: string,
  ): Promise<void> {
    if (name !== template.name)
      throw invalidParameter(`name ${name} is not the name of template ${template.template_id}`);
    const { state, graph, clock } = this.options;
    await graph.deleteTemplate(
      credentials(account),
      account.biz_account_id,
      name,
      template.template_id,
    );
    await state.chatAppTemplates.remove(template);
    const id = `${account.biz_account_id}:${name}`;
    const previous = await state.chatAppDeletedNames.get(account.account, id);
    const deleted = {
      account: account.account,
      subaccount: account.subaccount,
      created: previous?.created ?? clock.now(),
      id,
      deleted_at: clock.now(),
    };
    if (previous) await state.chatAppDeletedNames.update(deleted, previous);
    else await state.chatAppDeletedNames.create(deleted);
  }

  /**
   * A review event from upstream for `account`: moves the template (an event for a template of
   * another business account, or an unknown one, changes nothing) and forwards the change.
   * Resolves with whether a template changed.
   */
  async review(account: ChatAppAccountRecord, review: TemplateReview): Promise<boolean> {
    const { state, clock } = this.options;
    const current = await state.chatAppTemplates.findByUnique({
      space: 'chatapp_template',
      value: review.templateId,
    });
    if (!current || current.biz_account_id !== account.biz_account_id) return false;
    const status =
      review.status !== undefined && STATUSES.has(review.status)
        ? (review.status as ChatAppTemplateRecord['status'])
        : current.status;
    const next: ChatAppTemplateRecord = {
      ...current,
      modified: clock.now(),
      status,
      rejected_reason:
        review.status === undefined
          ? current.rejected_reason
          : status === 'REJECTED'
            ? review.reason || 'NONE'
            : 'NONE',
      quality_score:
        review.qualityScore !== undefined && QUALITY_SCORES.has(review.qualityScore)
          ? { score: review.qualityScore }
          : current.quality_score,
    };
    const changed =
      next.status !== current.status ||
      next.rejected_reason !== current.rejected_reason ||
      next.quality_score?.score !== current.quality_score?.score;
    if (!changed) return false;
    await state.chatAppTemplates.update(next, current);
    this.forward(account, next);
    return true;
  }

  private forward(account: ChatAppAccountRecord, template: ChatAppTemplateRecord): void {
    if (!account.webhook_url) return;
    this.options.callbacks
      .send({
        url: account.webhook_url,
        method: account.webhook_method,
        params: {
          Event: 'message_template_status_update',
          BizAccountId: account.biz_account_id,
          TemplateId: template.template_id,
          TemplateName: template.name,
          TemplateLanguage: template.language,
          TemplateCategory: template.category,
          Status: template.status,
          RejectedReason: template.rejected_reason,
          QualityScore: template.quality_score?.score ?? '',
          EventTime: callbackTime(template.modified),
        },
        accountId: account.subaccount ?? account.account,
        retryDelaysSeconds: [...MESSAGE_CALLBACK_RETRY_DELAYS_SECONDS],
        timeoutMs: 8000,
        context: { kind: 'template_review', template_id: template.template_id },
      })
      .catch(() => undefined);
  }

  private async checkNameFree(account: ChatAppAccountRecord, name: string): Promise<void> {
    const deleted = await this.options.state.chatAppDeletedNames.get(
      account.account,
      `${account.biz_account_id}:${name}`,
    );
    if (!deleted) return;
    const free = deleted.deleted_at + NAME_COOLDOWN_MS;
    if (this.options.clock.now() < free)
      throw invalidParameter(
        `name ${name} was deleted from business account ${account.biz_account_id} on ${dateOf(deleted.deleted_at)}: it can be used again from ${dateOf(free)}`,
      );
  }
}

function credentials(account: ChatAppAccountRecord) {
  return { accessToken: account.access_token };
}
