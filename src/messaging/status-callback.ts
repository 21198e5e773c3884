import type { CallbackRequest } from '../callbacks/index.js';
import { MESSAGE_CALLBACK_RETRY_DELAYS_SECONDS } from '../callbacks/index.js';
import type { MessageRecord } from '../state/records.js';
import { callbackTime } from './message-times.js';

/** wire-compat-messaging.md: "A receiver that does not answer 2xx within 8 s is retried". */
export const MESSAGE_CALLBACK_TIMEOUT_MS = 8000;

/**
 * The status callback of a message at its current state (wire-compat-messaging.md, Status
 * callbacks). `sequence` orders a message's callbacks for the receiver. Numbers are as the
 * record keeps them (masked when `log` says so).
 */
export function statusCallback(message: MessageRecord, sequence: number): CallbackRequest | null {
  if (!message.callback_url) return null;
  const failed = message.message_state === 'failed' || message.message_state === 'undelivered';
  const params: Record<string, string> = {
    MessageUUID: message.message_uuid,
    ParentMessageUUID: message.message_uuid,
    From: message.from_number,
    To: message.to_number,
    Type: message.message_type,
    Status: message.message_state,
    Units: String(message.units),
    TotalRate: message.total_rate,
    TotalAmount: message.total_amount,
    MCC: '',
    MNC: '',
    PartInfo: `${message.units} of ${message.units}`,
    Sequence: String(sequence),
    MessageTime: callbackTime(message.created),
    QueuedTime: callbackTime(message.created),
    SentTime: message.sent_time === null ? '' : callbackTime(message.sent_time),
    DeliveryReportTime:
      message.delivery_report_time === null ? '' : callbackTime(message.delivery_report_time),
  };
  if (failed) params.ErrorCode = message.error_code ?? '1000';
  return {
    url: message.callback_url,
    method: message.callback_method,
    params,
    accountId: message.subaccount ?? message.account,
    retryDelaysSeconds: [...MESSAGE_CALLBACK_RETRY_DELAYS_SECONDS],
    timeoutMs: MESSAGE_CALLBACK_TIMEOUT_MS,
    context: { kind: 'message_status', message_uuid: message.message_uuid },
  };
}
