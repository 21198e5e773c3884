import { attemptCallback, type AttemptOutcome } from './callback-attempt.js';
import { fetchSignedDocument, type FetchedDocument } from './document-fetch.js';
import {
  DEFAULT_CALLBACK_TIMEOUT_MS,
  redactCallbackUrl,
  validateCallbackRequest,
  type CallbackRequest,
} from './callback-request.js';
import type { OutboundRule } from '../core/address-policy.js';
import { selfHostedGuard, type OutboundGuard } from '../core/outbound-guard.js';
import type { RetryQueue } from './retry-queue.js';
import { signatureHeaders, type SigningTokens } from './signature.js';

/** Resolves an account's signing tokens at send time, so that no token is ever queued. */
export interface SigningKeys {
  /** null: the account no longer exists, and its callbacks are dropped. */
  keysFor(accountId: string): Promise<SigningTokens | null>;
}

/** What the retry queue holds: the request and how many attempts were already made. */
export interface CallbackJob {
  request: CallbackRequest;
  attemptsMade: number;
}

export interface CallbackReport {
  request: CallbackRequest;
  /** Attempts made so far, the first one included. */
  attempts: number;
  /** HTTP status of the last attempt, when it got one. */
  status?: number;
  /** Why the last attempt failed. */
  error?: string;
  /** The body of a 2xx answer, when the delivery reads bodies. */
  body?: string;
  /** The outbound rule that refused the URL: the callback was not sent and is not retried. */
  refused?: OutboundRule;
}

/**
 * How a delivery reports upward. Set per instance, not per request: a retry that outlives a
 * restart is reported by the instance that makes it.
 */
export interface CallbackDeliveryDelegate {
  onDelivered?(report: CallbackReport): void;
  onRetryScheduled?(report: CallbackReport & { delayMs: number }): void;
  /** Every attempt failed (or the next one could not be scheduled). */
  onGiveUp?(report: CallbackReport): void;
  /** The owning account is gone: the callback is dropped unsent. */
  onDropped?(report: CallbackReport): void;
}

/** The subset of a pino logger this class uses. */
export interface CallbackLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface CallbackDeliveryOptions {
  keys: SigningKeys;
  /** Taken over: started by the constructor, closed by close(). */
  queue: RetryQueue<CallbackJob>;
  delegate?: CallbackDeliveryDelegate;
  log?: CallbackLog;
  /** Reads 2xx bodies of at most this many bytes into the delivered report (message XML). */
  readBodyBytes?: number;
  /**
   * What every callback URL goes through; the self-hosted policy without own ports when
   * absent (the gateway always gives its configured one).
   */
  guard?: OutboundGuard;
}

const consoleLog: CallbackLog = {
  info: () => undefined,
  warn: (fields, message) => console.warn(message, fields),
};

/**
 * Delivers signed callbacks. The first attempt is made at once by send(); retries wait in the
 * retry queue, which with Redis survives a restart of the gateway.
 */
export class CallbackDelivery {
  private readonly keys: SigningKeys;
  private readonly queue: RetryQueue<CallbackJob>;
  private readonly delegate: CallbackDeliveryDelegate;
  private readonly log: CallbackLog;
  private readonly readBodyBytes: number | undefined;
  readonly guard: OutboundGuard;
  private readonly firstAttempts = new Set<Promise<unknown>>();
  private closing = false;

  constructor(options: CallbackDeliveryOptions) {
    this.keys = options.keys;
    this.queue = options.queue;
    this.delegate = options.delegate ?? {};
    this.log = options.log ?? consoleLog;
    this.readBodyBytes = options.readBodyBytes;
    this.guard = options.guard ?? selfHostedGuard();
    this.queue.start(async (job) => {
      await this.attempt(job);
    });
  }

  /** Makes the first attempt; resolves with whether it was delivered. Retries follow alone. */
  async send(request: CallbackRequest): Promise<boolean> {
    if (this.closing) throw new Error('Cannot send a callback: the callback delivery is closed');
    const job: CallbackJob = { request: validateCallbackRequest(request), attemptsMade: 0 };
    const attempt = this.attempt(job).finally(() => this.firstAttempts.delete(attempt));
    this.firstAttempts.add(attempt);
    return attempt;
  }

  /**
   * As send(), except while the account's signing keys cannot be read (the store is away):
   * then nothing is sent or queued and it resolves 'unsigned', for the caller to keep the
   * request and send it again later. What must go once (a hangup callback that waited for its
   * record) is not lost to the outage that made it wait.
   */
  async sendSigned(request: CallbackRequest): Promise<'delivered' | 'failed' | 'unsigned'> {
    if (this.closing) throw new Error('Cannot send a callback: the callback delivery is closed');
    const job: CallbackJob = { request: validateCallbackRequest(request), attemptsMade: 0 };
    const attempt = this.attempt(job, true).finally(() => this.firstAttempts.delete(attempt));
    this.firstAttempts.add(attempt);
    const outcome = await attempt;
    return outcome === 'unsigned' ? outcome : outcome ? 'delivered' : 'failed';
  }

  /**
   * Fetches a document from a client URL (answer XML), signed like every callback: one
   * attempt, no retry queue; the caller decides what a failure leads to.
   */
  async fetchDocument(request: CallbackRequest): Promise<FetchedDocument> {
    const checked = validateCallbackRequest(request);
    let tokens: SigningTokens | null;
    try {
      tokens = await this.keys.keysFor(checked.accountId);
    } catch (error) {
      return { ok: false, error: `signing keys unavailable: ${(error as Error).message}` };
    }
    if (tokens === null) return { ok: false, error: 'the account no longer exists' };
    return fetchSignedDocument(
      checked,
      tokens,
      checked.timeoutMs ?? DEFAULT_CALLBACK_TIMEOUT_MS,
      this.guard,
    );
  }

  /**
   * The signature headers for a request the gateway makes itself to a client URL (a stream's
   * WebSocket upgrade: a GET of that URL); null when the account no longer exists.
   */
  async signedHeaders(accountId: string, url: string): Promise<Record<string, string> | null> {
    const tokens = await this.keys.keysFor(accountId);
    return tokens === null ? null : signatureHeaders({ method: 'GET', url, params: {} }, tokens);
  }

  /** Lets first attempts finish (and queue their retries), then closes the retry queue. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.allSettled(this.firstAttempts);
    await this.queue.close();
  }

  private attempt(job: CallbackJob): Promise<boolean>;
  private attempt(job: CallbackJob, keepUnsigned: true): Promise<boolean | 'unsigned'>;
  private async attempt(job: CallbackJob, keepUnsigned = false): Promise<boolean | 'unsigned'> {
    const { request } = job;
    let outcome = await this.signAndSend(job);
    if (typeof outcome === 'object' && 'unsigned' in outcome) {
      if (keepUnsigned) return 'unsigned';
      // The account store is unreachable: a failed attempt, retried like any other.
      outcome = { ok: false, error: outcome.unsigned };
    }
    if (outcome === 'dropped') {
      this.report('onDropped', { request, attempts: job.attemptsMade });
      this.log.info(
        this.logFields(request, job.attemptsMade),
        'callback dropped: the account no longer exists',
      );
      return false;
    }
    const report: CallbackReport = {
      request,
      attempts: job.attemptsMade + 1,
      ...outcomeFields(outcome),
    };
    if (outcome.ok) {
      this.report('onDelivered', report);
      return true;
    }
    await this.scheduleNext(job, report);
    return false;
  }

  private async signAndSend(
    job: CallbackJob,
  ): Promise<AttemptOutcome | 'dropped' | { unsigned: string }> {
    const { request } = job;
    let tokens: SigningTokens | null;
    try {
      tokens = await this.keys.keysFor(request.accountId);
    } catch (error) {
      return { unsigned: `signing keys unavailable: ${(error as Error).message}` };
    }
    if (tokens === null) return 'dropped';
    return attemptCallback(
      request,
      tokens,
      request.timeoutMs ?? DEFAULT_CALLBACK_TIMEOUT_MS,
      this.guard,
      this.readBodyBytes,
    );
  }

  private async scheduleNext(job: CallbackJob, report: CallbackReport): Promise<void> {
    // A URL the outbound policy refuses is not tried again: the guard already logged the rule.
    const delaySeconds = report.refused
      ? undefined
      : job.request.retryDelaysSeconds?.[job.attemptsMade];
    if (delaySeconds === undefined) {
      this.log.warn(
        this.logFields(job.request, report.attempts, report),
        'callback failed: giving up',
      );
      this.report('onGiveUp', report);
      return;
    }
    const delayMs = Math.round(delaySeconds * 1000);
    try {
      await this.queue.schedule({ request: job.request, attemptsMade: report.attempts }, delayMs);
    } catch (error) {
      const reason = `could not schedule a retry: ${(error as Error).message}`;
      this.log.warn(
        this.logFields(job.request, report.attempts, report),
        `callback failed: ${reason}`,
      );
      this.report('onGiveUp', { ...report, error: `${report.error}; ${reason}` });
      return;
    }
    this.log.info(
      { ...this.logFields(job.request, report.attempts, report), delayMs },
      'callback failed: retry scheduled',
    );
    this.report('onRetryScheduled', { ...report, delayMs });
  }

  private logFields(
    request: CallbackRequest,
    attempts: number,
    report?: CallbackReport,
  ): Record<string, unknown> {
    // Never the query string, the params or a token: they may carry secrets.
    return {
      url: redactCallbackUrl(request.url),
      method: request.method,
      accountId: request.accountId,
      attempts,
      ...(report?.status === undefined ? {} : { status: report.status }),
      ...(report?.error === undefined ? {} : { error: report.error }),
      ...(report?.refused === undefined ? {} : { rule: report.refused }),
    };
  }

  private report<K extends keyof CallbackDeliveryDelegate>(
    hook: K,
    report: Parameters<NonNullable<CallbackDeliveryDelegate[K]>>[0],
  ): void {
    const listener = this.delegate[hook] as ((r: typeof report) => void) | undefined;
    try {
      listener?.call(this.delegate, report);
    } catch (error) {
      // A throwing listener must not turn a delivered callback into a retried one.
      this.log.warn({ hook, error: (error as Error).message }, 'callback delegate threw');
    }
  }
}

function outcomeFields(
  outcome: AttemptOutcome,
): Pick<CallbackReport, 'status' | 'error' | 'body' | 'refused'> {
  if (outcome.ok)
    return outcome.body === undefined
      ? { status: outcome.status }
      : { status: outcome.status, body: outcome.body };
  return {
    error: outcome.error,
    ...(outcome.status === undefined ? {} : { status: outcome.status }),
    ...(outcome.refused === undefined ? {} : { refused: outcome.refused }),
  };
}
