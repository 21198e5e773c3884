import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { ApiError, type ErrorCode } from '../core/errors.js';
import type { Scheduler } from '../core/scheduler.js';
import { withinStoreDeadline } from '../state/store-deadline.js';
import type { RedisClient } from './node-registry.js';

/** A request one node sends another, or the reply; `sig` signs the rest with the shared secret. */
interface Envelope {
  kind: 'request' | 'reply';
  id: string;
  from: string;
  to: string;
  /** Epoch ms it was sent: older than MAX_AGE_MS, it is refused (no replays). */
  at: number;
  method?: string;
  args?: unknown;
  ok?: boolean;
  result?: unknown;
  error?: { code?: ErrorCode; message: string };
}

const MAX_AGE_MS = 30_000;
const channelOf = (node: string) => `voxgate:{cluster}:control:${node}`;

/** An owner that did not answer within the timeout. */
export class ControlTimeout extends Error {
  constructor(
    readonly node: string,
    readonly method: string,
    timeoutMs: number,
  ) {
    super(`node ${node} did not answer ${method} within ${timeoutMs} ms`);
  }
}

/** A handler that failed on the remote node without an API error. */
export class RemoteError extends Error {}

type Handler = (args: never, from: string) => Promise<unknown>;

/**
 * Requests between gateway nodes over Redis pub/sub: each node listens on its own channel;
 * a request carries an id, the reply comes back on the sender's channel with that id, and the
 * sender gives up after the timeout (and rejects with ControlTimeout). Pub/sub rather than streams: a control request matters
 * only while its owner lives and the client waits (nothing to replay later, so nothing to
 * store, trim or acknowledge), and one PUBLISH reaches a listening node in one hop. A lost
 * message is a timeout, which the caller resolves with the owner's heartbeat. Every message
 * is signed with a secret the nodes share (HMAC-SHA256) and names its sender; a message with a
 * bad signature, too old, or from a node that is not alive is refused and logged.
 */
export class ControlBus {
  private readonly handlers = new Map<string, Handler>();
  private readonly pending = new Map<
    string,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();

  constructor(
    private readonly options: {
      node: string;
      /** Publishes. */
      redis: RedisClient;
      /** Subscribes (a connection of its own: a subscribed connection runs no commands). */
      subscriber: RedisClient;
      secret: Buffer;
      timeoutMs: number;
      scheduler: Scheduler;
      isAlive: (node: string) => Promise<boolean>;
      log: { warn(object: object, message: string): void };
    },
  ) {}

  /** Serves `method` for other nodes. */
  handle<A>(method: string, handler: (args: A, from: string) => Promise<unknown>): void {
    this.handlers.set(method, handler as Handler);
  }

  async start(): Promise<void> {
    const { subscriber, node, log } = this.options;
    subscriber.on('message', (channel: string, text: string) => {
      if (channel !== channelOf(node)) return;
      this.receive(text).catch((error: Error) =>
        log.warn({ err: error, cluster: true }, 'control message dropped'),
      );
    });
    // Again on every reconnection (see subscriberOf); a second SUBSCRIBE to a channel is a no-op.
    subscriber.on('ready', () => {
      subscriber
        .subscribe(channelOf(node))
        .catch((error: Error) =>
          log.warn({ err: error, cluster: true }, 'control subscription not renewed'),
        );
    });
    await subscriber.subscribe(channelOf(node));
  }

  async stop(): Promise<void> {
    for (const [, waiter] of this.pending) waiter.reject(new Error('the control bus stopped'));
    this.pending.clear();
    await this.options.subscriber.unsubscribe().catch(() => undefined);
    this.options.subscriber.disconnect();
  }

  /** Asks `node` to run `method`; rejects with ControlTimeout or RemoteError. */
  call(node: string, method: string, args: unknown): Promise<unknown> {
    const { timeoutMs, scheduler } = this.options;
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = scheduler.after(timeoutMs, () => {
        this.pending.delete(id);
        reject(new ControlTimeout(node, method, timeoutMs));
      });
      this.pending.set(id, {
        resolve: (value) => {
          timer.cancel();
          resolve(value);
        },
        reject: (error) => {
          timer.cancel();
          reject(error);
        },
      });
      this.send({ kind: 'request', id, from: this.options.node, to: node, method, args }).catch(
        (error: Error) => {
          this.pending.delete(id);
          timer.cancel();
          reject(error);
        },
      );
    });
  }

  private async send(message: Omit<Envelope, 'at'>): Promise<void> {
    const body = { ...message, at: this.options.scheduler.now() };
    const signed = { ...body, sig: this.sign(body) };
    await withinStoreDeadline(
      () => this.options.redis.publish(channelOf(message.to), JSON.stringify(signed)),
      undefined,
      this.options.redis,
    );
  }

  private sign(body: Envelope): string {
    return createHmac('sha256', this.options.secret).update(JSON.stringify(body)).digest('base64');
  }

  private async receive(text: string): Promise<void> {
    const { node, log, scheduler } = this.options;
    let message: Envelope & { sig?: string };
    try {
      message = JSON.parse(text) as Envelope & { sig?: string };
    } catch {
      log.warn({ cluster: true }, 'control message refused: not JSON');
      return;
    }
    const { sig, ...body } = message;
    const expected = Buffer.from(this.sign(body as Envelope));
    const given = Buffer.from(typeof sig === 'string' ? sig : '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      log.warn({ cluster: true, from: body.from }, 'control message refused: bad signature');
      return;
    }
    if (body.to !== node || Math.abs(scheduler.now() - body.at) > MAX_AGE_MS) {
      log.warn({ cluster: true, from: body.from }, 'control message refused: not for now or here');
      return;
    }
    if (body.kind === 'reply') {
      const waiter = this.pending.get(body.id);
      if (!waiter) return; // answered after its timeout
      this.pending.delete(body.id);
      if (body.ok) waiter.resolve(body.result);
      else {
        // An API error (404, 409...) is the same error here; anything else stays remote.
        const { code, message = 'failed' } = body.error ?? {};
        waiter.reject(code ? new ApiError(code, message) : new RemoteError(message));
      }
      return;
    }
    // Asked of Redis when the sender is new here: the store gone, the message is dropped and
    // its sender hears a timeout, as for a lost message.
    if (!(await this.options.isAlive(body.from))) {
      log.warn({ cluster: true, from: body.from }, 'control message refused: unknown node');
      return;
    }
    const handler = body.method ? this.handlers.get(body.method) : undefined;
    const reply = (fields: Partial<Envelope>) =>
      this.send({ kind: 'reply', id: body.id, from: node, to: body.from, ...fields }).catch(
        (error: Error) => log.warn({ err: error, cluster: true }, 'control reply not sent'),
      );
    if (!handler) {
      await reply({ ok: false, error: { message: `unknown method ${body.method}` } });
      return;
    }
    try {
      await reply({ ok: true, result: (await handler(body.args as never, body.from)) ?? null });
    } catch (error) {
      const code = error instanceof ApiError ? error.code : undefined;
      await reply({ ok: false, error: { code, message: (error as Error).message } });
    }
  }
}
