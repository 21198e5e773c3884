import { createHmac } from 'node:crypto';
import { randomDigits } from '../core/ids.js';

/**
 * Request signatures on every request the gateway makes to a client URL, as described in
 * spec/wire-compat.md "Callback signatures". Pure functions: the caller supplies the tokens
 * and the nonce, so the test vectors can be checked byte for byte.
 */

export type CallbackMethod = 'GET' | 'POST';

export interface SignedRequest {
  method: CallbackMethod;
  /** The URL as it will be requested; for GET it may already carry the parameters. */
  url: string;
  /** GET: query parameters to add to those already in the URL. POST: the form body. */
  params: Readonly<Record<string, string>>;
}

export interface SigningTokens {
  /** Auth token of the account that owns the resource the callback is about. */
  accountToken: string;
  /** Auth token of its main account (the same token when the owner is a main account). */
  mainToken: string;
}

/** The vectors in wire-compat.md use a 20-digit nonce. */
export const newSignatureNonce = (): string => randomDigits(20);

const hmacBase64 = (token: string, message: string): string =>
  createHmac('sha256', token).update(message, 'utf8').digest('base64');

/** scheme://host[:port]/path: the URL without query string or fragment. */
function urlWithoutQuery(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

type Pair = readonly [string, string];

// Plain code-unit order, the order JavaScript's default sort gives.
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const byKeyThenValue = (a: Pair, b: Pair): number => compare(a[0], b[0]) || compare(a[1], b[1]);

/** Values are signed decoded, as the receiving framework hands them to its validator. */
const sortedQuery = (pairs: Pair[]): string =>
  [...pairs]
    .sort(byKeyThenValue)
    .map(([k, v]) => `${k}=${v}`)
    .join('&');

/** V2: base64(HMAC-SHA256(auth token, URL without query string + nonce)). */
export function signatureV2(authToken: string, url: string, nonce: string): string {
  return hmacBase64(authToken, urlWithoutQuery(new URL(url)) + nonce);
}

/** The string V3 signs, before `"." + nonce` is appended. */
export function signatureV3Payload(request: SignedRequest): string {
  return v3Payload(new URL(request.url), request.method, request.params);
}

function v3Payload(
  url: URL,
  method: CallbackMethod,
  requestParams: Readonly<Record<string, string>>,
): string {
  const base = urlWithoutQuery(url);
  const queryPairs: Pair[] = [...url.searchParams];
  const params: Pair[] = Object.entries(requestParams);

  if (method === 'GET' || params.length === 0) {
    // wire-compat: "GET: URL, then if there are query parameters `?` + all of them sorted by
    // key then value, joined `k=v&k=v`."
    // With no POST parameters at all the client SDKs that validate these headers sign the URL
    // as for a GET (no `?`, no `.`), so an empty form is signed that way to stay verifiable.
    const query = sortedQuery([...queryPairs, ...params]);
    return query === '' ? base : `${base}?${query}`;
  }

  // wire-compat: "POST: URL + `?`; if the URL has a query string, its parameters sorted and
  // joined `k=v&...` followed by `.`; then the POST parameters sorted by key, concatenated as
  // `keyvalue` with no separators."
  const query = sortedQuery(queryPairs);
  const body = params
    .sort(byKeyThenValue)
    .map(([k, v]) => k + v)
    .join('');
  return `${base}?${query === '' ? '' : `${query}.`}${body}`;
}

/** V3: base64(HMAC-SHA256(auth token, payload + "." + nonce)). */
export function signatureV3(authToken: string, request: SignedRequest, nonce: string): string {
  return hmacBase64(authToken, `${signatureV3Payload(request)}.${nonce}`);
}

/**
 * The signature headers for one request: the six values under both header prefixes. A fresh
 * nonce is drawn unless one is given, so every attempt of a retried callback carries a new
 * nonce.
 */
export function signatureHeaders(
  request: SignedRequest,
  tokens: SigningTokens,
  nonce: string = newSignatureNonce(),
): Record<string, string> {
  return signatureHeadersOf(new URL(request.url), request.method, request.params, tokens, nonce);
}

/** signatureHeaders for a URL the caller has parsed already (each parse costs µs). */
export function signatureHeadersOf(
  url: URL,
  method: CallbackMethod,
  params: Readonly<Record<string, string>>,
  tokens: SigningTokens,
  nonce: string = newSignatureNonce(),
): Record<string, string> {
  // Each message is built once and signed with both tokens; a main account's own callbacks
  // (both tokens the same) need each HMAC once.
  const v2Message = urlWithoutQuery(url) + nonce;
  const v3Message = `${v3Payload(url, method, params)}.${nonce}`;
  const sameToken = tokens.accountToken === tokens.mainToken;
  const v2 = hmacBase64(tokens.accountToken, v2Message);
  const v3 = hmacBase64(tokens.accountToken, v3Message);
  const maV2 = sameToken ? v2 : hmacBase64(tokens.mainToken, v2Message);
  const maV3 = sameToken ? v3 : hmacBase64(tokens.mainToken, v3Message);
  // wire-compat: the API documents name X-Service-Signature-*, existing applications of the
  // public service read X-Plivo-Signature-*; both sets carry the same values.
  return {
    'X-Service-Signature-V2': v2,
    'X-Service-Signature-Ma-V2': maV2,
    'X-Service-Signature-V2-Nonce': nonce,
    'X-Service-Signature-V3': v3,
    'X-Service-Signature-Ma-V3': maV3,
    'X-Service-Signature-V3-Nonce': nonce,
    'X-Plivo-Signature-V2': v2,
    'X-Plivo-Signature-Ma-V2': maV2,
    'X-Plivo-Signature-V2-Nonce': nonce,
    'X-Plivo-Signature-V3': v3,
    'X-Plivo-Signature-Ma-V3': maV3,
    'X-Plivo-Signature-V3-Nonce': nonce,
  };
}
