import type { MessageRecord } from '../state/records.js';

/**
 * The `log` setting of a message (wire-compat-messaging.md): `true` keeps number and text;
 * `false` masks the number's last three digits and replaces the text with a marker;
 * `number_only` keeps the number and redacts the text; `content_only` keeps the text and masks
 * the number. Records and log lines follow the same rule.
 */
export type LogSetting = 'true' | 'false' | 'content_only' | 'number_only';

export const LOG_SETTINGS: readonly LogSetting[] = ['true', 'false', 'content_only', 'number_only'];

export const REDACTED_TEXT = 'redacted';

export function keepsNumber(log: LogSetting): boolean {
  return log === 'true' || log === 'number_only';
}

export function keepsText(log: LogSetting): boolean {
  return log === 'true' || log === 'content_only';
}

/** `14155550100` → `14155550xxx` (a sender id shorter than four characters is masked whole). */
export function maskNumber(number: string): string {
  if (number.length < 4) return 'x'.repeat(number.length);
  return `${number.slice(0, -3)}xxx`;
}

/** The number as the setting allows it to be kept. */
export function loggedNumber(number: string, log: LogSetting): string {
  return keepsNumber(log) ? number : maskNumber(number);
}

/** The text as the setting allows it to be kept. */
export function loggedText(text: string, log: LogSetting): string {
  return keepsText(log) ? text : REDACTED_TEXT;
}

/** Reads a `log` value as clients send it: a string or a JSON boolean. */
export function parseLogSetting(value: unknown): LogSetting | null {
  if (value === undefined || value === null || value === true) return 'true';
  if (value === false) return 'false';
  const text = String(value).toLowerCase();
  return (LOG_SETTINGS as readonly string[]).includes(text) ? (text as LogSetting) : null;
}

export interface MessageLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/** What each state a message moves to is called in the log. */
const STATE_LINES: Record<string, string> = {
  queued: 'message accepted',
  sent: 'message submitted to the carrier',
  delivered: 'message delivered',
  read: 'message read',
  failed: 'message failed',
  undelivered: 'message undelivered',
};

/**
 * One line each time an outbound message moves on: accepted (queued), submitted to the carrier
 * (sent), and its final state; a failed or undelivered one is a warning with its error code and
 * why. Numbers are as the record keeps them (its `log` setting), and never its text.
 */
export function logMessageState(log: MessageLog, record: MessageRecord): void {
  const line = STATE_LINES[record.message_state];
  if (!line || record.message_direction !== 'outbound') return;
  const fields: Record<string, unknown> = {
    message_uuid: record.message_uuid,
    type: record.message_type,
    state: record.message_state,
    from: record.from_number,
    to: record.to_number,
    units: record.units,
    authId: record.subaccount ?? record.account,
    ...(record.carrier ? { carrier: record.carrier } : {}),
  };
  if (record.message_state === 'failed' || record.message_state === 'undelivered')
    log.warn({ ...fields, error_code: record.error_code, reason: record.error_message }, line);
  else log.info(fields, line);
}
