import { StoreUnavailable } from '../core/errors.js';

/** What a client is promised in an outage: its request is answered 503 within this (ms). */
export const STORE_TIMEOUT_MS = 3000;

/**
 * Upper bound on one store operation, all its commands included (ms): under the promise, with
 * room for the answer itself.
 */
export const STORE_CALL_MS = 2500;

/**
 * Once an operation on a client found Redis unavailable, that client's next operations on a
 * request's path (the store's, the rate limiter's) fail at once, and one of them every
 * PROBE_EVERY_MS tries Redis again, until one gets through. A request whose steps each reach
 * the store (the rate limiter, authentication, the route's own reads) thus waits for a silent
 * Redis once, not once a step, and answers 503 within the promise. Kept per client: a
 * connection that is closed on purpose (a subscriber, a test's node) must not fail another's
 * operations. (A budget carried with each request through AsyncLocalStorage did the same at a
 * fifth more of the gateway's CPU per message on Node 20, whose promise hooks it turns on for
 * every promise.)
 */
const PROBE_EVERY_MS = 500;

interface Breaker {
  failingSince: number | null;
  lastTry: number;
}

const breakers = new WeakMap<object, Breaker>();

function breakerOf(client: object): Breaker {
  let breaker = breakers.get(client);
  if (!breaker) breakers.set(client, (breaker = { failingSince: null, lastTry: 0 }));
  return breaker;
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
  timeoutMs = STORE_CALL_MS,
  /** The client whose breaker applies (the store's, the rate limiter's); none: no breaker. */
  client?: object,
): Promise<T> {
  const now = Date.now();
  const breaker = client ? breakerOf(client) : null;
  if (breaker && breaker.failingSince !== null) {
    if (now - breaker.lastTry < PROBE_EVERY_MS)
      throw new StoreUnavailable(
        `Redis did not answer ${now - breaker.failingSince} ms ago and is not tried again yet`,
      );
    breaker.lastTry = now;
  }
  const waitMs = timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreUnavailable(`no answer from Redis within ${waitMs} ms`)),
      waitMs,
    );
  });
  try {
    const result = await Promise.race([work(), deadline]);
    if (breaker) breaker.failingSince = null;
    return result;
  } catch (error) {
    const unavailable = unavailability(error);
    if (unavailable && breaker) {
      breaker.failingSince ??= Date.now();
      breaker.lastTry = Date.now();
    }
    throw unavailable ?? error;
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
