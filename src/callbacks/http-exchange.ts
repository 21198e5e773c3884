import { Agent as HttpAgent, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { OutboundRule } from '../core/address-policy.js';
import { directRequest, guardedRequest, type GuardedRequestInit } from '../core/guarded-http.js';
import { OutboundRefused, type OutboundGuard } from '../core/outbound-guard.js';

/** Connections to client applications are kept open and reused between callbacks. */
const agents = {
  'http:': new HttpAgent({ keepAlive: true, maxSockets: 256 }),
  'https:': new HttpsAgent({ keepAlive: true, maxSockets: 256 }),
};

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

/**
 * One HTTP request to a client URL over node:http (fetch costs several times as much CPU per
 * request, which matters at hundreds of calls a second). Redirects are not followed. The
 * body is read only when `readBody` asks, up to `maxBytes`; otherwise it is drained.
 */
export function httpExchange(
  request: HttpExchangeRequest,
  options: HttpExchangeOptions,
): Promise<HttpExchangeResult> {
  const { url } = request;
  return new Promise((resolve) => {
    let settled = false;
    let inFlight: ClientRequest | undefined;
    const settle = (result: HttpExchangeResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const headers: Record<string, string> = { ...request.headers };
    if (request.body !== undefined)
      headers['Content-Length'] = String(Buffer.byteLength(request.body));
    const init: GuardedRequestInit = {
      method: request.method,
      headers,
      agents,
      // A request made after the deadline (its host took that long to resolve) goes no further.
      onRequest: (req) => (settled ? req.destroy() : (inFlight = req)),
    };
    if (request.body !== undefined) init.body = request.body;
    const timer = setTimeout(() => {
      settle({ ok: false, error: `no response within ${options.timeoutMs} ms` });
      inFlight?.destroy();
    }, options.timeoutMs);
    const sent = options.guard
      ? guardedRequest(options.guard, url, init).then(({ response }) => response)
      : directRequest(url, init);
    sent.then(
      (res) => receive(res, options.readBody?.maxBytes, settle),
      (error: NodeJS.ErrnoException) =>
        settle(
          error instanceof OutboundRefused
            ? { ok: false, error: error.message, refused: error.rule }
            : { ok: false, error: error.code ?? error.message },
        ),
    );
  });
}

function receive(
  res: IncomingMessage,
  maxBytes: number | undefined,
  settle: (result: HttpExchangeResult) => void,
): void {
  const status = res.statusCode ?? 0;
  const contentType = String(res.headers['content-type'] ?? '');
  if (maxBytes === undefined) {
    res.resume();
    res.on('end', () => settle({ ok: true, status, contentType, body: null }));
    res.on('error', (error) => settle({ ok: false, error: error.message }));
    return;
  }
  const declared = Number(res.headers['content-length'] ?? '0');
  const tooLarge = (): void => {
    res.destroy();
    settle({ ok: false, status, error: `the document is larger than ${maxBytes} bytes` });
  };
  if (declared > maxBytes) return tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) return tooLarge();
    chunks.push(chunk);
  });
  res.on('end', () => settle({ ok: true, status, contentType, body: Buffer.concat(chunks) }));
  res.on('error', (error) => settle({ ok: false, error: error.message }));
}
