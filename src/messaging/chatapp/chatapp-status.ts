import type { MessageRecord } from '../../state/records.js';

/** A chat-app status from upstream's webhook (`statuses[]`). */
export interface ChatAppStatus {
  id: string;
  status: string;
  errors?: { code?: unknown; title?: unknown; message?: unknown }[];
  conversation?: { id?: unknown; expiration_timestamp?: unknown; origin?: { type?: unknown } };
}

/** Chat-app states in the order a message goes through them; none moves back. */
const ORDER = ['queued', 'sent', 'delivered', 'read'];

/**
 * The states a message at `current` goes through for an upstream `status`, in order: none for
 * one it is already past, the missing ones for one that skips (read before delivered), failed
 * only before delivery.
 */
export function chatAppSteps(current: string, status: string): string[] {
  const from = ORDER.indexOf(current);
  if (from < 0) return [];
  if (status === 'failed') return from < ORDER.indexOf('delivered') ? ['failed'] : [];
  return ORDER.slice(from + 1, ORDER.indexOf(status) + 1);
}

/** The record after one step, at `now`. */
export function chatAppStep(
  current: MessageRecord,
  step: string,
  status: ChatAppStatus,
  now: number,
): MessageRecord {
  const failed = step === 'failed';
  const error = status.errors?.[0];
  return {
    ...current,
    ...conversationOf(status, current),
    message_state: step as MessageRecord['message_state'],
    updated_time: now,
    delivery_report_time: step === 'delivered' || failed ? now : current.delivery_report_time,
    error_code: failed ? '1000' : step === 'sent' ? current.error_code : '000',
    error_message: failed
      ? `upstream error ${String(error?.code ?? '')}: ${String(error?.title ?? error?.message ?? 'failed')}`
      : current.error_message,
    parts: current.parts.map((p, k) =>
      k === 0 && (step === 'delivered' || failed)
        ? { ...p, state: failed ? ('failed' as const) : ('delivered' as const) }
        : p,
    ),
  };
}

/** The conversation upstream reports with a status, over what the record had. */
export function conversationOf(status: ChatAppStatus, current: MessageRecord) {
  const conversation = status.conversation;
  const expires = Number(conversation?.expiration_timestamp);
  return {
    conversation_id:
      typeof conversation?.id === 'string' ? conversation.id : current.conversation_id,
    conversation_origin:
      typeof conversation?.origin?.type === 'string'
        ? conversation.origin.type
        : current.conversation_origin,
    conversation_expiration_timestamp: Number.isFinite(expires)
      ? expires * 1000
      : current.conversation_expiration_timestamp,
  };
}
