import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { basicCredentials } from '../core/authorization-header.js';
import { systemClock, type Clock } from '../core/clock.js';
import { ApiError, unauthorized } from '../core/errors.js';
import type { AccountRecord } from '../state/records.js';
import type { State } from '../state/state.js';
import { AuthFailures, type AuthFailureSettings } from './auth-failures.js';

/** Who is making a request: an enabled account whose credentials matched. */
export interface Principal {
  authId: string;
  /** The main account that owns everything the principal can see. */
  tenant: string;
  isMain: boolean;
  account: AccountRecord;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

/** The challenge of a 401 for account credentials (RFC 7617 2: HTTP Basic, with a realm). */
export const ACCOUNT_CHALLENGE = 'Basic realm="voxgate"';

const CACHE_MS = 1000;
/** What a presented token of an unknown auth id is compared with: a digest of nothing. */
const UNKNOWN_ACCOUNT_DIGEST = '0'.repeat(64);

/** An account as read for authentication, kept for CACHE_MS. */
interface CachedAccount {
  account: AccountRecord | null;
  until: number;
  /**
   * The token that last matched the account's stored digest while this entry lives, so that a
   * burst of requests computes the keyed digest once. Compared in constant time like the digest.
   */
  verified: Buffer | null;
}

/**
 * Credentials that were presented and are wrong (unreadable, an unknown auth id, a token that
 * does not match): what counts against the source address in AuthFailures. No credentials at
 * all (a client's first try, answered with the challenge), a disabled account or another
 * account's path do not count.
 */
class WrongCredentials extends ApiError {
  constructor(message: string) {
    super('unauthorized', message);
  }
}

const NO_CREDENTIALS = 'authentication required: use HTTP Basic with your auth id and auth token';

/**
 * HTTP Basic authentication against the accounts. Lookups are cached for a second, so a burst
 * of requests costs one read and one keyed digest; a change made on this node drops the cached
 * entry at once. `failures` counts wrong credentials per source address (auth-failures.ts).
 */
export class Authenticator {
  private readonly cache = new Map<string, CachedAccount>();
  readonly failures: AuthFailures;

  constructor(
    private readonly state: State,
    options: { clock?: Clock; failures?: AuthFailureSettings } = {},
  ) {
    this.failures = new AuthFailures(options.clock ?? systemClock, options.failures);
  }

  async authenticate(header: string | undefined): Promise<Principal> {
    const credentials = parseBasic(header);
    if (!credentials) {
      if (header) throw new WrongCredentials(NO_CREDENTIALS);
      throw unauthorized(NO_CREDENTIALS);
    }
    const entry = await this.lookup(credentials.id);
    const { account } = entry;
    const presented = Buffer.from(credentials.token, 'utf8');
    const matches =
      sameBytes(entry.verified, presented) || this.matchesDigest(account, credentials.token);
    const failed = 'authentication failed: wrong auth id or auth token';
    // Only a wrong token for an account that exists counts towards the address's throttle: an
    // unknown auth id guesses nothing, and every id is unknown for the moment after a wiped
    // store (the main account is put back within a heartbeat), when a busy client must not be
    // locked out for a minute.
    if (!account) throw unauthorized(failed);
    if (!matches) throw new WrongCredentials(failed);
    entry.verified = presented;
    if (!account.enabled) throw unauthorized('authentication failed: the account is disabled');
    if (account.subaccount) {
      const main = (await this.lookup(account.account)).account;
      if (!main?.enabled) throw unauthorized('authentication failed: the account is disabled');
    }
    return {
      authId: account.auth_id,
      tenant: account.account,
      isMain: account.subaccount === null,
      account,
    };
  }

  forget(authId: string): void {
    this.cache.delete(authId);
  }

  /**
   * Against the stored keyed digest (one written by an older version has none: its token's), and
   * even when the account is unknown, so timing does not tell which ids exist.
   */
  private matchesDigest(account: AccountRecord | null, token: string): boolean {
    const { secrets } = this.state;
    const expected = account
      ? (account.auth_token_digest ?? secrets.digest(account.auth_token))
      : UNKNOWN_ACCOUNT_DIGEST;
    return secrets.matches(token, expected);
  }

  private async lookup(authId: string): Promise<CachedAccount> {
    const now = Date.now();
    const hit = this.cache.get(authId);
    if (hit && hit.until > now) return hit;
    const account = await this.state.accounts.findByUnique({ space: 'auth_id', value: authId });
    if (this.cache.size > 10_000) this.cache.clear();
    const entry: CachedAccount = { account, until: now + CACHE_MS, verified: null };
    this.cache.set(authId, entry);
    return entry;
  }
}

function sameBytes(known: Buffer | null, presented: Buffer): boolean {
  return known !== null && known.length === presented.length && timingSafeEqual(known, presented);
}

/** The auth id and token of HTTP Basic credentials, whatever the case of the scheme. */
function parseBasic(header: string | undefined): { id: string; token: string } | null {
  const credentials = basicCredentials(header);
  return credentials && { id: credentials.user, token: credentials.password };
}

/**
 * Authenticates every request of the scope it is installed in, and requires the `auth_id` of the
 * path to be the authenticated account's own. A source address that has sent too many wrong
 * credentials is answered 429 with Retry-After, its credentials unread, until its window
 * passes; loopback is no exception.
 */
export function installAuthentication(app: FastifyInstance, authenticator: Authenticator): void {
  const { failures } = authenticator;
  const { limit, windowMs } = failures.settings;
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const source = request.ip;
    const wait = failures.waitFor(source);
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      reply.header('retry-after', String(seconds));
      throw new ApiError(
        'rate_limited',
        `too many failed authentications from this address (${limit} in ${windowMs / 1000} s): retry in ${seconds} s`,
      );
    }
    const principal = await authenticator
      .authenticate(request.headers.authorization)
      .catch((error: unknown) => {
        if (error instanceof WrongCredentials && failures.failed(source))
          request.log.warn(
            { source, failures: limit, window_s: windowMs / 1000 },
            'wrong credentials from one address: its requests answer 429 until the window passes',
          );
        throw error;
      });
    const pathId = (request.params as { auth_id?: string }).auth_id;
    if (pathId !== undefined && pathId !== principal.authId) {
      throw unauthorized(`the credentials are not those of account ${pathId}`);
    }
    request.principal = principal;
  });
}
