import type { CallbackRequest } from './callback-request.js';
import { signatureHeadersOf, type SigningTokens } from './signature.js';

/** What signing needs of a callback. */
export type UnsignedRequest = Pick<CallbackRequest, 'url' | 'method' | 'params'>;

export interface SignedHttpRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** The exact HTTP request for one attempt, signed with a fresh nonce. */
export function buildCallbackHttpRequest(
  request: UnsignedRequest,
  tokens: SigningTokens,
): SignedHttpRequest {
  const url = new URL(request.url);
  url.hash = '';
  // Credentials in the URL become Basic auth when sent; neither signature covers them.
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
  return { url, method: request.method, headers, ...(body === undefined ? {} : { body }) };
}
