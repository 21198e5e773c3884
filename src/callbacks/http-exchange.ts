import type { OutboundRule } from '../core/address-policy.js';
import { OutboundRefused, type OutboundGuard } from '../core/outbound-guard.js';
import type { ExchangeOutcome } from './http-worker-protocol.js';
import { HttpWorkerChannel, type Order } from './http-worker-channel.js';
import type { UnsignedRequest } from './signed-request.js';
import type { SigningTokens } from './signature.js';

export interface HttpExchangeRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export type HttpExchangeResult =
  | { ok: true; status: number; contentType: string; body: Buffer | null }
  /**
   * No response: the reason (an errno code such as ECONNREFUSED, the timeout, or the outbound
   * rule that refused the URL, named in `refused`).
   */
  | { ok: false; error: string; refused?: OutboundRule }
  /** A response whose body was larger than allowed; it was not read further. */
  | { ok: false; status: number; error: string };

export interface HttpExchangeOptions {
  timeoutMs: number;
  readBody?: { maxBytes: number };
  /**
   * The outbound guard every tenant-supplied URL goes through; null only for a URL the
   * operator configured (the MMSC).
   */
  guard: OutboundGuard | null;
}

let channel: HttpWorkerChannel | null = null;
let crashes = 0;
const crashListeners = new Set<HttpWorkerCrashListener>();

/** Told when the HTTP worker dies: why, and how many requests failed with it. */
export type HttpWorkerCrashListener = (reason: string, failedRequests: number) => void;

/** The HTTP worker of this process, started at the first request (and again after a crash). */
function httpWorker(): HttpWorkerChannel {
  channel ??= new HttpWorkerChannel((dead, reason, inFlight) => {
    if (channel === dead) channel = null;
    crashes += 1;
    for (const listener of crashListeners) listener(reason, inFlight);
  });
  return channel;
}

/** The HTTP worker as /metrics shows it: one per process, shared by everything in it. */
export function httpWorkerState(): { inFlight: number; crashes: number } {
  return { inFlight: channel?.inFlight ?? 0, crashes };
}

/** Calls `listener` at each death of the HTTP worker; the function returned stops it. */
export function onHttpWorkerCrash(listener: HttpWorkerCrashListener): () => void {
  crashListeners.add(listener);
  return () => crashListeners.delete(listener);
}

/**
 * One HTTP request to a client URL, made by the HTTP worker thread over undici's connection
 * pools (node:http costs about twice the CPU per request, fetch several times: it matters at
 * thousands of callbacks a second). Redirects are not followed. The body is read only when
 * `readBody` asks, up to `maxBytes`; otherwise it is drained. Never rejects.
 */
export function httpExchange(
  request: HttpExchangeRequest,
  options: HttpExchangeOptions,
): Promise<HttpExchangeResult> {
  const { url, ...rest } = request;
  return send({ request: { url: url.href, ...rest } }, url.href, options);
}

/**
 * httpExchange for a callback, signed in the HTTP worker (signature headers with a fresh nonce;
 * GET parameters in the query, POST ones as a form), so its HMACs cost the main thread nothing.
 */
export function signedExchange(
  request: UnsignedRequest,
  tokens: SigningTokens,
  options: HttpExchangeOptions,
): Promise<HttpExchangeResult> {
  const { url, method, params } = request;
  return send({ request: { sign: { url, method, params, tokens } } }, url, options);
}

async function send(
  order: Pick<Order, 'request'>,
  url: string,
  options: HttpExchangeOptions,
): Promise<HttpExchangeResult> {
  const outcome = await httpWorker().exchange(
    {
      ...order,
      timeoutMs: options.timeoutMs,
      ...(options.readBody ? { readBodyBytes: options.readBody.maxBytes } : {}),
    },
    options.guard,
  );
  return resultOf(outcome, url, options.guard);
}

function resultOf(
  outcome: ExchangeOutcome,
  url: string,
  guard: OutboundGuard | null,
): HttpExchangeResult {
  if (outcome.ok) {
    const { body } = outcome;
    return {
      ...outcome,
      body: body === null ? null : Buffer.from(body.buffer, body.byteOffset, body.byteLength),
    };
  }
  if (!('refused' in outcome) || !outcome.refused || !guard)
    return 'status' in outcome ? outcome : { ok: false, error: outcome.error };
  // The guard is told of the refusal with the whole URL, which the worker's pool did not know.
  const { refusal, host, port } = outcome.refused;
  const refused = guard.refused(new OutboundRefused(refusal, host, port), new URL(url));
  return { ok: false, error: refused.message, refused: refused.rule };
}

/** Ends the HTTP worker thread as a crash would (tests). */
export async function stopHttpWorker(): Promise<void> {
  await channel?.terminate();
}
