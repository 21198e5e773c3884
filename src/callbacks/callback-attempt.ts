import type { OutboundRule } from '../core/address-policy.js';
import type { OutboundGuard } from '../core/outbound-guard.js';
import type { CallbackRequest } from './callback-request.js';
import { httpExchange } from './http-exchange.js';
import { signatureHeadersOf, type SigningTokens } from './signature.js';

export type AttemptOutcome =
  | { ok: true; status: number; body?: string }
  /** `refused`: the outbound rule that refused the URL (nothing was sent). */
  | { ok: false; status?: number; error: string; refused?: OutboundRule };

interface HttpRequest {
  url: URL;
  init: { method: string; headers: Record<string, string>; body?: string };
}

/** The exact HTTP request for one attempt, signed with a fresh nonce. */
export function buildCallbackHttpRequest(
  request: CallbackRequest,
  tokens: SigningTokens,
): HttpRequest {
  const url = new URL(request.url);
  url.hash = '';
  // Credentials in the URL become Basic auth in httpExchange; neither signature covers them.
  const headers: Record<string, string> = {};

  let body: string | undefined;
  let signed: Readonly<Record<string, string>>;
  if (request.method === 'GET') {
    // A callback parameter replaces a same-named one already in the URL; the signature is
    // computed over the URL as sent, so it covers exactly what the receiver sees.
    for (const [key, value] of Object.entries(request.params)) url.searchParams.set(key, value);
    signed = {};
  } else {
    body = new URLSearchParams(request.params).toString();
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    signed = request.params;
  }
  Object.assign(headers, signatureHeadersOf(url, request.method, signed, tokens));
  return {
    url,
    init: { method: request.method, headers, ...(body === undefined ? {} : { body }) },
  };
}

/**
 * One signed attempt. Success is any 2xx; a redirect is not followed and counts as failure.
 * With `readBodyBytes` a 2xx body of at most that size is read and returned.
 */
export async function attemptCallback(
  request: CallbackRequest,
  tokens: SigningTokens,
  timeoutMs: number,
  guard: OutboundGuard,
  readBodyBytes?: number,
): Promise<AttemptOutcome> {
  const { url, init } = buildCallbackHttpRequest(request, tokens);
  const result = await httpExchange(
    { url, ...init },
    readBodyBytes
      ? { timeoutMs, guard, readBody: { maxBytes: readBodyBytes } }
      : { timeoutMs, guard },
  );
  if (!result.ok) return result;
  const { status } = result;
  if (status >= 200 && status < 300)
    return result.body
      ? { ok: true, status, body: result.body.toString('utf8') }
      : { ok: true, status };
  return { ok: false, status, error: `HTTP ${status}` };
}
