import { isIP } from 'node:net';
import { buildConnector, Pool } from 'undici';
import type { OutboundRule } from '../core/address-policy.js';
import { OutboundRefused, type OutboundGuard } from '../core/outbound-guard.js';

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

/** Connections kept open per origin, as a client application's callbacks come in bursts. */
const CONNECTIONS_PER_ORIGIN = 256;
/** Origins whose connection pools are kept; beyond, the least recently used one is closed. */
const POOLED_ORIGINS = 1000;

/**
 * Connection pools by guard and origin. A pool's connections are made through its guard: each
 * new connection resolves and checks the host once and goes to the checked address (TLS still
 * verifies the URL's host), so a request on a kept-open connection needs no second check.
 */
const guardedPools = new WeakMap<OutboundGuard, Map<string, Pool>>();
const operatorPools = new Map<string, Pool>();

function poolFor(guard: OutboundGuard | null, origin: string): Pool {
  const byOrigin = guard ? poolsOf(guard) : operatorPools;
  let pool = byOrigin.get(origin);
  if (pool) {
    // Most recently used last, so the first one is the one to close when there are too many.
    byOrigin.delete(origin);
    byOrigin.set(origin, pool);
    return pool;
  }
  if (byOrigin.size >= POOLED_ORIGINS) {
    const [oldest, old] = byOrigin.entries().next().value as [string, Pool];
    byOrigin.delete(oldest);
    void old.close().catch(() => undefined);
  }
  pool = new Pool(origin, {
    connections: CONNECTIONS_PER_ORIGIN,
    ...(guard ? { connect: guardedConnector(guard) } : {}),
  });
  byOrigin.set(origin, pool);
  return pool;
}

function poolsOf(guard: OutboundGuard): Map<string, Pool> {
  let pools = guardedPools.get(guard);
  if (!pools) guardedPools.set(guard, (pools = new Map()));
  return pools;
}

function guardedConnector(guard: OutboundGuard): buildConnector.connector {
  const connect = buildConnector({});
  return (options, callback) => {
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
    const authority = isIP(host) === 6 ? `[${host}]` : host;
    const port = options.port === '' ? '' : `:${options.port}`;
    guard.pin(new URL(`${options.protocol}//${authority}${port}/`), false).then(
      (target) =>
        connect(
          {
            ...options,
            hostname: target.address,
            // SNI and the certificate check stay with the name the URL gave.
            ...(isIP(host) ? {} : { servername: host }),
          },
          callback,
        ),
      (error: Error) => callback(error, null),
    );
  };
}

/**
 * One HTTP request to a client URL over undici's connection pools (node:http costs about twice
 * the CPU per request, fetch several times: it matters at thousands of callbacks a second).
 * Redirects are not followed. The body is read only when `readBody` asks, up to `maxBytes`;
 * otherwise it is drained.
 */
export function httpExchange(
  request: HttpExchangeRequest,
  options: HttpExchangeOptions,
): Promise<HttpExchangeResult> {
  const { url } = request;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: HttpExchangeResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const timer = setTimeout(
      () => settle({ ok: false, error: `no response within ${options.timeoutMs} ms` }),
      options.timeoutMs,
    );
    const headers: Record<string, string> = { ...request.headers };
    // Credentials in the URL become Basic auth, as a browser makes them.
    if (url.username !== '' || url.password !== '')
      headers.Authorization ??= `Basic ${Buffer.from(
        `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`,
      ).toString('base64')}`;
    poolFor(options.guard, url.origin)
      .request({
        path: `${url.pathname}${url.search}`,
        method: request.method as 'GET',
        headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        // The pool gives up on its own when the deadline has long passed (a silent server).
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      })
      .then(
        (response) => {
          const contentType = response.headers['content-type'];
          const received = {
            status: response.statusCode,
            contentType: String(Array.isArray(contentType) ? contentType[0] : (contentType ?? '')),
            declared: Number(response.headers['content-length'] ?? '0'),
            body: response.body,
          };
          if (settled) return discard(response.body);
          receive(received, options.readBody?.maxBytes, settle);
        },
        (error: NodeJS.ErrnoException) =>
          settle(
            error instanceof OutboundRefused
              ? {
                  ok: false,
                  error: options.guard!.refused(error, url).message,
                  refused: error.rule,
                }
              : {
                  ok: false,
                  error: error.code && !error.code.startsWith('UND_') ? error.code : error.message,
                },
          ),
      );
  });
}

interface Received {
  status: number;
  contentType: string;
  declared: number;
  body: NodeJS.ReadableStream & { destroy(): void };
}

function receive(
  res: Received,
  maxBytes: number | undefined,
  settle: (result: HttpExchangeResult) => void,
): void {
  const { status, contentType, body } = res;
  if (maxBytes === undefined) {
    body.on('error', (error: Error) => settle({ ok: false, error: error.message }));
    body.on('end', () => settle({ ok: true, status, contentType, body: null }));
    body.resume();
    return;
  }
  const tooLarge = (): void => {
    discard(body);
    settle({ ok: false, status, error: `the document is larger than ${maxBytes} bytes` });
  };
  if (res.declared > maxBytes) return tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  body.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) return tooLarge();
    chunks.push(chunk);
  });
  body.on('end', () => settle({ ok: true, status, contentType, body: Buffer.concat(chunks) }));
  body.on('error', (error: Error) => settle({ ok: false, error: error.message }));
}

/** Stops reading a body; undici's answers that with an error event, which is of no interest. */
function discard(body: Received['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}
