import type { FastifyInstance, FastifyRequest } from 'fastify';
import { unauthorized } from '../core/errors.js';
import type { AccountRecord } from '../state/records.js';
import type { State } from '../state/state.js';

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

const CACHE_MS = 1000;
/** What a presented token of an unknown auth id is compared with: a digest of nothing. */
const UNKNOWN_ACCOUNT_DIGEST = '0'.repeat(64);

/**
 * HTTP Basic authentication against the accounts. Lookups are cached for a second, so a burst
 * of requests costs one read; a change made on this node drops the cached entry at once.
 */
export class Authenticator {
  private readonly cache = new Map<string, { account: AccountRecord | null; until: number }>();

  constructor(private readonly state: State) {}

  async authenticate(header: string | undefined): Promise<Principal> {
    const credentials = parseBasic(header);
    if (!credentials)
      throw unauthorized(
        'authentication required: use HTTP Basic with your auth id and auth token',
      );
    const account = await this.lookup(credentials.id);
    // Against the stored keyed digest (one written by an older version has none: its token's),
    // and even when the account is unknown, so timing does not tell which ids exist.
    const { secrets } = this.state;
    const expected = account
      ? (account.auth_token_digest ?? secrets.digest(account.auth_token))
      : UNKNOWN_ACCOUNT_DIGEST;
    const matches = secrets.matches(credentials.token, expected);
    if (!account || !matches)
      throw unauthorized('authentication failed: wrong auth id or auth token');
    if (!account.enabled) throw unauthorized('authentication failed: the account is disabled');
    if (account.subaccount) {
      const main = await this.lookup(account.account);
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

  private async lookup(authId: string): Promise<AccountRecord | null> {
    const now = Date.now();
    const hit = this.cache.get(authId);
    if (hit && hit.until > now) return hit.account;
    const account = await this.state.accounts.findByUnique({ space: 'auth_id', value: authId });
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(authId, { account, until: now + CACHE_MS });
    return account;
  }
}

function parseBasic(header: string | undefined): { id: string; token: string } | null {
  if (!header) return null;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  return { id: decoded.slice(0, colon), token: decoded.slice(colon + 1) };
}

/**
 * Authenticates every request of the scope it is installed in, and requires the `auth_id` of the
 * path to be the authenticated account's own.
 */
export function installAuthentication(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const principal = await authenticator.authenticate(request.headers.authorization);
    const pathId = (request.params as { auth_id?: string }).auth_id;
    if (pathId !== undefined && pathId !== principal.authId) {
      throw unauthorized(`the credentials are not those of account ${pathId}`);
    }
    request.principal = principal;
  });
}
