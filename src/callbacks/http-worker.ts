/**
 * The HTTP worker thread: makes the gateway's requests to client URLs over undici's connection
 * pools, and signs callbacks, so that the main thread spends on a callback only the message
 * that orders it. At thousands of callbacks a second this is a quarter of what the main thread
 * did. Policy stays on the main thread: which requests, their retries, and the outbound guard,
 * asked over the channel for every new connection (PinQuestion).
 */
import { isIP } from 'node:net';
import { parentPort } from 'node:worker_threads';
import { buildConnector, Pool } from 'undici';
import { MessageBatch } from '../core/message-batch.js';
import { buildCallbackHttpRequest } from './signed-request.js';
import type {
  ExchangeOrder,
  ExchangeOutcome,
  FromWorker,
  PinVerdict,
  PlainRequest,
  RefusalFacts,
  ToWorker,
} from './http-worker-protocol.js';

/** Connections kept open per origin, as a client application's callbacks come in bursts. */
const CONNECTIONS_PER_ORIGIN = 256;
/** Origins whose connection pools are kept; beyond, the least recently used one is closed. */
const POOLED_ORIGINS = 1000;

const port = parentPort!;
const outbox = new MessageBatch<FromWorker>((messages) => port.postMessage(messages));

/** A connection the guard refused: carries what the main thread needs to say why. */
class PinRefused extends Error {
  constructor(readonly facts: RefusalFacts) {
    super('refused by the outbound guard');
  }
}

const pinWaiters = new Map<number, (verdict: PinVerdict) => void>();
let pinSequence = 0;

function askPin(guard: number, origin: string): Promise<PinVerdict> {
  const id = ++pinSequence;
  return new Promise((resolve) => {
    pinWaiters.set(id, resolve);
    outbox.push({ kind: 'pin', id, guard, origin });
  });
}

/**
 * Connection pools by guard and origin. A pool's connections are made through its guard: each
 * new connection has the host resolved and checked once and goes to the checked address (TLS
 * still verifies the URL's host), so a request on a kept-open connection needs no second check.
 */
const pools = new Map<number | null, Map<string, Pool>>();

function poolFor(guard: number | null, origin: string): Pool {
  let byOrigin = pools.get(guard);
  if (!byOrigin) pools.set(guard, (byOrigin = new Map()));
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
    ...(guard === null ? {} : { connect: guardedConnector(guard) }),
  });
  byOrigin.set(origin, pool);
  return pool;
}

function guardedConnector(guard: number): buildConnector.connector {
  const connect = buildConnector({});
  return (options, callback) => {
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
    const authority = isIP(host) === 6 ? `[${host}]` : host;
    const portPart = options.port === '' ? '' : `:${options.port}`;
    void askPin(guard, `${options.protocol}//${authority}${portPart}/`).then((verdict) => {
      if (verdict.ok)
        connect(
          {
            ...options,
            hostname: verdict.address,
            // SNI and the certificate check stay with the name the URL gave.
            ...(isIP(host) ? {} : { servername: host }),
          },
          callback,
        );
      else if ('refused' in verdict) callback(new PinRefused(verdict.refused), null);
      else callback(Object.assign(new Error(verdict.error), { code: verdict.code }), null);
    });
  };
}

/** The request of an order as it goes, its URL parsed (once: a signed one is parsed to sign). */
function requestOf(order: ExchangeOrder): Omit<PlainRequest, 'url'> & { url: URL } {
  if ('sign' in order.request) {
    const { tokens, ...callback } = order.request.sign;
    return buildCallbackHttpRequest(callback, tokens);
  }
  return { ...order.request, url: new URL(order.request.url) };
}

/**
 * One request. Redirects are not followed. The body is read only when the order asks, up to
 * its size; otherwise it is drained.
 */
function exchange(order: ExchangeOrder): Promise<ExchangeOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: ExchangeOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const timer = setTimeout(
      () => settle({ ok: false, error: `no response within ${order.timeoutMs} ms` }),
      order.timeoutMs,
    );
    let request: ReturnType<typeof requestOf>;
    try {
      request = requestOf(order);
    } catch (error) {
      settle({ ok: false, error: (error as Error).message });
      return;
    }
    const { url } = request;
    const headers: Record<string, string> = { ...request.headers };
    // Credentials in the URL become Basic auth, as a browser makes them.
    if (url.username !== '' || url.password !== '')
      headers.Authorization ??= `Basic ${Buffer.from(
        `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`,
      ).toString('base64')}`;
    poolFor(order.guard, url.origin)
      .request({
        path: `${url.pathname}${url.search}`,
        method: request.method as 'GET',
        headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        // The pool gives up on its own when the deadline has long passed (a silent server).
        headersTimeout: order.timeoutMs,
        bodyTimeout: order.timeoutMs,
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
          receive(received, order.readBodyBytes, settle);
        },
        (error: NodeJS.ErrnoException) =>
          settle(
            error instanceof PinRefused
              ? { ok: false, error: error.message, refused: error.facts }
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
  settle: (outcome: ExchangeOutcome) => void,
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

port.on('message', (messages: ToWorker[]) => {
  for (const message of messages) {
    if (message.kind === 'forget') {
      for (const pool of pools.get(message.guard)?.values() ?? [])
        void pool.close().catch(() => undefined);
      pools.delete(message.guard);
      continue;
    }
    if (message.kind === 'pinned') {
      const waiter = pinWaiters.get(message.id);
      pinWaiters.delete(message.id);
      waiter?.(message.verdict);
      continue;
    }
    const { id } = message;
    // A request undici refuses outright (a header it cannot send) fails alone.
    void exchange(message).then(
      (outcome) => outbox.push({ kind: 'done', id, outcome }),
      (error: Error) =>
        outbox.push({ kind: 'done', id, outcome: { ok: false, error: error.message } }),
    );
  }
});
