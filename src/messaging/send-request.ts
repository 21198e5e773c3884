import { HTTP_PROTOCOLS, isAbsoluteUrl } from '../core/absolute-url.js';
import { invalidParameter, missingParameter } from '../core/errors.js';
import { normaliseE164 } from '../core/phone-number.js';
import { parseChatAppContent, type ChatAppContent } from './chatapp/chatapp-send.js';
import { parseLogSetting, type LogSetting } from './message-log.js';
import { MAX_MEDIA_URLS } from './mms/media-fetch.js';
import { smsLengthError } from './sms/sms-plan.js';

/** messaging document, Send a message: "dst ... multiple separated by `<`". */
export const MAX_DESTINATIONS = 1000;
/** messaging document, Limits: "message_expiry 5-10,799 s, default 10,800". */
export const MIN_EXPIRY_SECONDS = 5;
export const MAX_EXPIRY_SECONDS = 10_799;
export const DEFAULT_EXPIRY_SECONDS = 10_800;

export type SenderKind = 'number' | 'short_code' | 'alphanumeric';

/** A send request checked and normalised; the pipeline still checks what needs the state. */
export interface SendRequest {
  type: 'sms';
  /** Digits (number, short code) or the sender id; null when a powerpack picks the sender. */
  src: string | null;
  senderKind: SenderKind | null;
  powerpackUuid: string | null;
  /** Valid destinations as E.164 digits, in the order given. */
  destinations: string[];
  /** Destinations that are not valid numbers, as given. */
  invalid: string[];
  text: string;
  url: string | null;
  method: 'GET' | 'POST';
  expirySeconds: number;
  log: LogSetting;
  trackable: boolean;
}

/** A chat-app send checked and normalised: `src` is a number of a business account. */
export interface ChatAppSendRequest {
  type: 'chatapp';
  src: string;
  destinations: string[];
  invalid: string[];
  content: ChatAppContent;
  url: string | null;
  method: 'GET' | 'POST';
  expirySeconds: number;
  log: LogSetting;
  trackable: boolean;
}

/** An MMS send checked and normalised; its media are fetched when it is accepted. */
export interface MmsSendRequest {
  type: 'mms';
  /** A number of the account (E.164 digits) or a short code. */
  src: string;
  senderKind: 'number' | 'short_code';
  destinations: string[];
  invalid: string[];
  /** The text part, '' for none. */
  text: string;
  mediaUrls: string[];
  url: string | null;
  method: 'GET' | 'POST';
  expirySeconds: number;
  log: LogSetting;
  trackable: boolean;
}

/** wire-compat-messaging.md: "an alphanumeric sender id (at most 11 characters, letters and
 * digits, at least one letter)". */
const ALPHANUMERIC_SENDER = /^(?=.*[A-Za-z])[A-Za-z0-9]{1,11}$/;
const SHORT_CODE = /^\d{3,8}$/;
const SEPARATORS = /[\s\-.()]/g;

/** Reads a `POST Message/` body (JSON or form fields); throws a 400 or 422 naming the field. */
export function parseSendRequest(
  body: Record<string, unknown>,
): SendRequest | ChatAppSendRequest | MmsSendRequest {
  const type = optionalString(body, 'type')?.toLowerCase() ?? 'sms';
  if (type === 'chatapp' || type === 'whatsapp') return parseChatAppSend(body);
  if (type === 'mms') return parseMmsSend(body);
  if (type !== 'sms') throw invalidParameter(`type must be one of sms, mms, chatapp or whatsapp`);

  const rawSrc = optionalString(body, 'src');
  const powerpackUuid = optionalString(body, 'powerpack_uuid') || null;
  if (!rawSrc && !powerpackUuid) throw missingParameter('missing required parameter: src');
  if (rawSrc && powerpackUuid)
    throw invalidParameter('src and powerpack_uuid cannot both be given: use one of them');
  const sender = rawSrc ? parseSender(rawSrc) : null;
  const { destinations, invalid } = parseDestinations(body);

  const text = optionalString(body, 'text', false);
  if (text === undefined || text === '') throw missingParameter('missing required parameter: text');
  const tooLong = smsLengthError(text);
  if (tooLong) throw invalidParameter(tooLong);

  return {
    type: 'sms',
    src: sender?.value ?? null,
    senderKind: sender?.kind ?? null,
    powerpackUuid,
    destinations,
    invalid,
    text,
    ...parseDelivery(body),
  };
}

function parseChatAppSend(body: Record<string, unknown>): ChatAppSendRequest {
  const rawSrc = optionalString(body, 'src');
  if (!rawSrc) throw missingParameter('missing required parameter: src');
  if (optionalString(body, 'powerpack_uuid'))
    throw invalidParameter('powerpack_uuid is for sms: a chat-app message is sent from src');
  const src = normaliseE164(rawSrc);
  if (!src) throw invalidParameter(`src ${rawSrc} is not a chat-app business number (E.164)`);
  const { destinations, invalid } = parseDestinations(body);
  return {
    type: 'chatapp',
    src,
    destinations,
    invalid,
    content: parseChatAppContent(body),
    ...parseDelivery(body),
  };
}

function parseMmsSend(body: Record<string, unknown>): MmsSendRequest {
  const rawSrc = optionalString(body, 'src');
  if (!rawSrc) throw missingParameter('missing required parameter: src');
  if (optionalString(body, 'powerpack_uuid'))
    throw invalidParameter('powerpack_uuid is for sms: an MMS is sent from src');
  const sender = parseSender(rawSrc);
  if (sender.kind === 'alphanumeric')
    throw invalidParameter(`src ${rawSrc}: an MMS is sent from a number or a short code`);
  const { destinations, invalid } = parseDestinations(body);
  const raw = body.media_urls;
  const mediaUrls = (Array.isArray(raw) ? raw.map(String) : String(raw ?? '').split(','))
    .map((u) => u.trim())
    .filter(Boolean);
  if (mediaUrls.length === 0) throw missingParameter('missing required parameter: media_urls');
  if (mediaUrls.length > MAX_MEDIA_URLS)
    throw invalidParameter(`media_urls holds ${mediaUrls.length} URLs: at most ${MAX_MEDIA_URLS}`);
  const badMedia = mediaUrls.find((url) => !isAbsoluteUrl(url, HTTP_PROTOCOLS));
  if (badMedia !== undefined)
    throw invalidParameter(
      `media_urls must hold http or https URLs: ${JSON.stringify(badMedia.slice(0, 100))} is not one`,
    );
  const text = optionalString(body, 'text', false) ?? '';
  const tooLong = smsLengthError(text);
  if (tooLong) throw invalidParameter(tooLong);
  return {
    type: 'mms',
    src: sender.value,
    senderKind: sender.kind,
    destinations,
    invalid,
    text,
    mediaUrls,
    ...parseDelivery(body),
  };
}

function parseDestinations(body: Record<string, unknown>) {
  const rawDst = optionalString(body, 'dst');
  if (!rawDst) throw missingParameter('missing required parameter: dst');
  const given = rawDst
    .split('<')
    .map((d) => d.trim())
    .filter(Boolean);
  if (given.length === 0) throw invalidParameter('dst must hold at least one number');
  if (given.length > MAX_DESTINATIONS)
    throw invalidParameter(
      `dst holds ${given.length} destinations: at most ${MAX_DESTINATIONS.toLocaleString('en-US')}`,
    );
  const destinations: string[] = [];
  const invalid: string[] = [];
  for (const entry of given) {
    const number = normaliseE164(entry);
    if (number) destinations.push(number);
    else invalid.push(entry);
  }
  if (destinations.length === 0)
    throw invalidParameter(`dst: ${invalid.join(', ')} is not a valid E.164 number`);
  return { destinations, invalid };
}

/** The status callback, expiry, logging and tracking settings every type shares. */
function parseDelivery(body: Record<string, unknown>) {
  return {
    url: parseUrl(body),
    method: parseMethod(body),
    expirySeconds: parseExpiry(body),
    log: parseLog(body),
    trackable: parseBoolean(body, 'trackable', false),
  };
}

function parseSender(raw: string): { value: string; kind: SenderKind } {
  const compact = raw.trim().replace(SEPARATORS, '');
  const digits = compact.replace(/^\+/, '');
  if (/^\d+$/.test(digits)) {
    if (!compact.startsWith('+') && SHORT_CODE.test(digits))
      return { value: digits, kind: 'short_code' };
    const number = normaliseE164(compact);
    if (number) return { value: number, kind: 'number' };
  } else if (ALPHANUMERIC_SENDER.test(raw.trim())) {
    return { value: raw.trim(), kind: 'alphanumeric' };
  }
  throw invalidParameter(
    `src ${raw} is not a valid sender: use a number of this account, a short code of 3 to 8 digits or an alphanumeric sender id of at most 11 letters and digits`,
  );
}

function parseUrl(body: Record<string, unknown>): string | null {
  const url = optionalString(body, 'url');
  if (!url) return null;
  if (!isAbsoluteUrl(url, HTTP_PROTOCOLS))
    throw invalidParameter('url must be an http or https URL');
  return url;
}

function parseMethod(body: Record<string, unknown>): 'GET' | 'POST' {
  const method = optionalString(body, 'method')?.toUpperCase() ?? 'POST';
  if (method !== 'GET' && method !== 'POST') throw invalidParameter('method must be GET or POST');
  return method;
}

function parseExpiry(body: Record<string, unknown>): number {
  const raw = body.message_expiry;
  if (raw === undefined || raw === null || raw === '') return DEFAULT_EXPIRY_SECONDS;
  const value = typeof raw === 'number' ? raw : Number(String(raw));
  if (
    !Number.isInteger(value) ||
    value < MIN_EXPIRY_SECONDS ||
    value > MAX_EXPIRY_SECONDS ||
    (typeof raw === 'string' && !/^\d+$/.test(raw.trim()))
  )
    throw invalidParameter(
      `message_expiry must be a whole number of seconds from ${MIN_EXPIRY_SECONDS} to ${MAX_EXPIRY_SECONDS.toLocaleString('en-US')}`,
    );
  return value;
}

function parseLog(body: Record<string, unknown>): LogSetting {
  const log = parseLogSetting(body.log);
  if (!log) throw invalidParameter('log must be one of true, false, content_only or number_only');
  return log;
}

function parseBoolean(body: Record<string, unknown>, name: string, fallback: boolean): boolean {
  const raw = body[name];
  if (raw === undefined || raw === null || raw === '') return fallback;
  if (raw === true || raw === 'true' || raw === 'True') return true;
  if (raw === false || raw === 'false' || raw === 'False') return false;
  throw invalidParameter(`${name} must be true or false`);
}

function optionalString(
  body: Record<string, unknown>,
  name: string,
  trim = true,
): string | undefined {
  const raw = body[name];
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'number') return String(raw);
  if (typeof raw !== 'string') throw invalidParameter(`${name} must be a string`);
  return trim ? raw.trim() : raw;
}
