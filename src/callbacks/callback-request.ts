import { remembered } from '../core/remembered.js';
import type { CallbackMethod } from './signature.js';

/**
 * One callback to a client URL. It holds no secret: the signing tokens are looked up by
 * `accountId` at send time, so the request can sit in a durable retry queue as it is.
 */
export interface CallbackRequest {
  url: string;
  method: CallbackMethod;
  /** GET: added to the query string. POST: the form body. */
  params: Record<string, string>;
  /** The account that owns what the callback is about; its tokens sign the request. */
  accountId: string;
  /** Delays between attempts; `[60, 120, 240]` makes three retries. None when absent. */
  retryDelaysSeconds?: number[];
  /** How long one attempt waits for the response; 5000 when absent. */
  timeoutMs?: number;
  /**
   * What the callback is about, for the delivery's delegate (plain strings, never a secret:
   * it is queued with the request). Not sent.
   */
  context?: Record<string, string>;
}

/** messaging: "retries three times: 60 s after the original attempt, 120 s after the first
 * retry, 240 s after the second retry." */
export const MESSAGE_CALLBACK_RETRY_DELAYS_SECONDS: readonly number[] = [60, 120, 240];

export const DEFAULT_CALLBACK_TIMEOUT_MS = 5000;

const MAX_RETRY_DELAY_SECONDS = 24 * 60 * 60;
const MAX_TIMEOUT_MS = 120_000;

/** The scheme of a URL, null when it is not one; callbacks go to the same few URLs again and again. */
const schemeOf = remembered((url: string): string | null => {
  try {
    return new URL(url).protocol;
  } catch {
    return null;
  }
}, 1000);

/** Checks a request at the public edge so delivery can trust it; returns a clean copy. */
export function validateCallbackRequest(request: CallbackRequest): CallbackRequest {
  const scheme = schemeOf(String(request.url));
  if (scheme === null) {
    throw new TypeError(
      `Expected an absolute http or https URL for url but received ${JSON.stringify(request.url)}`,
    );
  }
  if (scheme !== 'http:' && scheme !== 'https:') {
    throw new TypeError(`Expected an http or https URL for url but received the scheme ${scheme}`);
  }
  if (request.method !== 'GET' && request.method !== 'POST') {
    throw new TypeError(
      `Expected GET or POST for method but received ${JSON.stringify(request.method)}`,
    );
  }
  if (typeof request.accountId !== 'string' || request.accountId === '') {
    throw new TypeError('Expected a non-empty string for accountId');
  }
  const params: Record<string, string> = {};
  for (const [key, value] of Object.entries(request.params ?? {})) {
    if (typeof value !== 'string') {
      throw new TypeError(`Expected a string for params.${key} but received ${typeof value}`);
    }
    params[key] = value;
  }
  const delays = request.retryDelaysSeconds ?? [];
  for (const delay of delays) {
    if (
      typeof delay !== 'number' ||
      !Number.isFinite(delay) ||
      delay < 0 ||
      delay > MAX_RETRY_DELAY_SECONDS
    ) {
      throw new RangeError(
        `Expected a number of seconds between 0 and ${MAX_RETRY_DELAY_SECONDS} in retryDelaysSeconds but received ${delay}`,
      );
    }
  }
  const timeoutMs = request.timeoutMs ?? DEFAULT_CALLBACK_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) {
    throw new RangeError(
      `Expected an integer between 1 and ${MAX_TIMEOUT_MS} for timeoutMs but received ${timeoutMs}`,
    );
  }
  return {
    url: request.url,
    method: request.method,
    params,
    accountId: request.accountId,
    retryDelaysSeconds: [...delays],
    timeoutMs,
    ...(request.context ? { context: { ...request.context } } : {}),
  };
}

/** The URL as logs may show it: no credentials, no query string (it may carry a secret). */
export function redactCallbackUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(invalid url)';
  }
}
