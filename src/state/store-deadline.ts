import { AsyncLocalStorage } from 'node:async_hooks';
import { StoreUnavailable } from '../core/errors.js';

/** Upper bound on one store operation, all its commands included (ms). */
export const STORE_TIMEOUT_MS = 3000;

/**
 * What a waiting client has left for the store: every store call made on its behalf fails by
 * then. `open` turns false once the client is answered, so that work a request started and
 * that goes on after it (a call's life, a message's sending) is bound by STORE_TIMEOUT_MS alone.
 */
export interface StoreBudget {
  until: number;
  open: boolean;
}

/**
 * A call made after the budget ran out still gets this long: a store that answers at all
 * answers in well under it, and a request that waited for a dead store once (a step that let
 * the failure through, such as the rate limiter) still fails within the promise after one more.
 */
const LAST_CALL_MS = 200;

const budgets = new AsyncLocalStorage<StoreBudget>();

/** Runs `work` (and everything it starts) under `budget`. */
export function withStoreBudget<T>(budget: StoreBudget, work: () => T): T {
  return budgets.run(budget, work);
}

/** How long a store call made now may wait: its own bound, or less if a client waits. */
export function storeWaitMs(timeoutMs = STORE_TIMEOUT_MS): number {
  const budget = budgets.getStore();
  if (!budget?.open) return timeoutMs;
  return Math.min(timeoutMs, Math.max(budget.until - Date.now(), LAST_CALL_MS));
}

/**
 * Runs Redis commands with a deadline, and turns an unreachable or silent Redis into
 * StoreUnavailable: the client hears 503 and Retry-After within the deadline, never a 500 or a
 * hang. Every path to Redis goes through here (the document store, the cluster's registry and
 * directory, the limit counters, the queues), so each answers the same way in an outage.
 * `work`'s own promise may settle after the deadline: it is still observed, so its late
 * failure (ioredis's "Command timed out") is no unhandled rejection.
 */
export async function withinStoreDeadline<T>(
  work: () => Promise<T>,
  timeoutMs = STORE_TIMEOUT_MS,
): Promise<T> {
  const waitMs = storeWaitMs(timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreUnavailable(`no answer from Redis within ${waitMs} ms`)),
      waitMs,
    );
  });
  try {
    return await Promise.race([work(), deadline]);
  } catch (error) {
    throw unavailability(error) ?? error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Connection failures, timeouts and the replies of a Redis in transition (a cluster re-electing,
 * a replica not yet promoted, a server loading its data) mean "try again"; other reply errors
 * and our own errors are bugs and stay as they are.
 */
export function unavailability(error: unknown): StoreUnavailable | null {
  if (error instanceof StoreUnavailable) return error;
  if (!(error instanceof Error)) return null;
  if (error.name === 'ReplyError')
    return TRANSIENT_REPLY.test(error.message) ? new StoreUnavailable(error.message) : null;
  return CONNECTION_ERRORS.has(error.name) ? new StoreUnavailable(error.message) : null;
}

/** MOVED and ASK reach us only once a Cluster's redirections ran out, as its slots move. */
const TRANSIENT_REPLY =
  /^(CLUSTERDOWN|TRYAGAIN|LOADING|READONLY|MASTERDOWN|NOREPLICAS|MOVED|ASK)\b/;
/**
 * ioredis reports a closed connection and a command timeout as plain Errors, and a command cut
 * off by a connection closing under it as an AbortError.
 */
const CONNECTION_ERRORS = new Set([
  'Error',
  'AbortError',
  'MaxRetriesPerRequestError',
  'ClusterAllFailedError',
]);
