import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { signatureV2, signatureV3, type SigningTokens } from '../../src/callbacks/signature.js';

/** A request as the client application received it. */
export interface ReceivedCallback {
  method: string;
  /** Absolute URL as the receiver rebuilds it from Host and the request line. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

/** An HTTP status to answer with, or 'hang' to never answer. */
export type Reply = number | 'hang';

/** A document the application serves at a path (answer XML): fixed, or made per request. */
interface Served {
  status?: number;
  body: string;
  contentType?: string;
  /** Answer this much later (a slow application). */
  delayMs?: number;
}
export type Document = Served | ((request: ReceivedCallback) => Served);

/** A real HTTP server on a random loopback port playing the client application. */
export class ClientApp {
  readonly received: ReceivedCallback[] = [];
  private readonly replies: Reply[] = [];
  private readonly documents = new Map<string, Document>();
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<ClientApp> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const app = new ClientApp(server, `http://127.0.0.1:${port}`);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        app.received.push({
          method: req.method ?? '',
          url: `http://${req.headers.host}${req.url}`,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: Date.now(),
        });
        const received = app.received.at(-1)!;
        for (const wake of app.waiters) wake();
        const document = app.documents.get(new URL(received.url).pathname);
        if (document) {
          const made = typeof document === 'function' ? document(received) : document;
          const send = () =>
            res
              .writeHead(made.status ?? 200, { 'Content-Type': made.contentType ?? 'text/xml' })
              .end(made.body);
          const delay = made.delayMs ?? 0;
          if (delay > 0) setTimeout(send, delay);
          else send();
          return;
        }
        const reply = app.replies.shift() ?? 200;
        if (reply !== 'hang') res.writeHead(reply).end();
      });
    });
    return app;
  }

  /** The answers to the next requests, in order; 200 once they run out. */
  replyWith(...replies: Reply[]): void {
    this.replies.push(...replies);
  }

  /** Serves `document` at `path` (any method) from now on. */
  serve(path: string, document: Document): void {
    this.documents.set(path, document);
  }

  /** The requests that reached `path`, their parameters parsed (query and form body). */
  requestsTo(path: string): (ReceivedCallback & { params: Record<string, string> })[] {
    return this.received
      .filter((r) => new URL(r.url).pathname === path)
      .map((r) => ({ ...r, params: paramsOf(r) }));
  }

  /**
   * The parameters of the one hangup callback (at `hangupPath`) of the call whose answer URL
   * was requested at `answerPath`, picked by its CallUUID (a callback of an earlier call may
   * still come in), waiting up to 20 s for it.
   */
  async hangupOf(answerPath: string, hangupPath = '/hangup'): Promise<Record<string, string>> {
    const answered = this.requestsTo(answerPath);
    expect(answered).toHaveLength(1);
    const callUuid = answered[0]!.params.CallUUID;
    expect(callUuid).toBeTruthy();
    const ours = () => this.requestsTo(hangupPath).filter((r) => r.params.CallUUID === callUuid);
    const deadline = Date.now() + 20_000;
    while (ours().length === 0) {
      if (Date.now() > deadline) throw new Error(`no ${hangupPath} callback for ${callUuid}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(ours()).toHaveLength(1);
    return ours()[0]!.params;
  }

  reset(): void {
    this.received.length = 0;
    this.replies.length = 0;
    this.documents.clear();
  }

  /** Resolves once `count` requests arrived in all; fails after a generous deadline. */
  async waitForRequests(count: number, timeoutMs = 15_000): Promise<ReceivedCallback[]> {
    if (this.received.length >= count) return this.received.slice(0, count);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(
          new Error(`expected ${count} requests, got ${this.received.length} in ${timeoutMs} ms`),
        );
      }, timeoutMs);
      const check = (): void => {
        if (this.received.length < count) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(this.received.slice(0, count));
      };
      this.waiters.add(check);
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const header = (callback: ReceivedCallback, name: string): string => {
  const value = callback.headers[name.toLowerCase()];
  if (typeof value !== 'string') throw new Error(`missing header ${name}`);
  return value;
};

/** Checks all six signature headers the way a receiving application validates them. */
export function expectValidSignatures(callback: ReceivedCallback, tokens: SigningTokens): void {
  const method = callback.method as 'GET' | 'POST';
  const params = method === 'POST' ? Object.fromEntries(new URLSearchParams(callback.body)) : {};
  const signed = { method, url: callback.url, params };
  const v2Nonce = header(callback, 'X-Service-Signature-V2-Nonce');
  const v3Nonce = header(callback, 'X-Service-Signature-V3-Nonce');
  expect(v2Nonce).toMatch(/^\d{20}$/);
  expect(v3Nonce).toMatch(/^\d{20}$/);
  expect(header(callback, 'X-Service-Signature-V2')).toBe(
    signatureV2(tokens.accountToken, callback.url, v2Nonce),
  );
  expect(header(callback, 'X-Service-Signature-Ma-V2')).toBe(
    signatureV2(tokens.mainToken, callback.url, v2Nonce),
  );
  expect(header(callback, 'X-Service-Signature-V3')).toBe(
    signatureV3(tokens.accountToken, signed, v3Nonce),
  );
  expect(header(callback, 'X-Service-Signature-Ma-V3')).toBe(
    signatureV3(tokens.mainToken, signed, v3Nonce),
  );
}

/** A callback's parameters: the query string's, then the form body's. */
export function paramsOf(callback: ReceivedCallback): Record<string, string> {
  const params = Object.fromEntries(new URL(callback.url).searchParams);
  if (callback.method === 'POST')
    Object.assign(params, Object.fromEntries(new URLSearchParams(callback.body)));
  return params;
}

/**
 * Status callbacks' parameters in the order of their `Sequence`: each is its own HTTP request,
 * so two sent moments apart can arrive the other way round, and `Sequence` is how a receiver
 * orders them.
 */
export function paramsBySequence(callbacks: ReceivedCallback[]): Record<string, string>[] {
  return callbacks.map(paramsOf).sort((a, b) => Number(a.Sequence) - Number(b.Sequence));
}
