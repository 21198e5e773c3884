import type { Clock } from '../core/clock.js';
import type { SigningKeys } from './callback-delivery.js';
import type { SigningTokens } from './signature.js';

/** How long an account's tokens are reused without asking the store again. */
export const SIGNING_KEYS_TTL_MS = 1000;
const LIMIT = 10_000;

/**
 * Signing keys looked up at most once a second per account. A message costs three callbacks
 * and a call several, each of which would otherwise read the account (and its main account)
 * from the store. Tokens never change once issued; an account deleted less than a second ago
 * may still have a callback signed with its tokens. Accounts that are not found are not kept.
 */
export function recentSigningKeys(keys: SigningKeys, clock: Clock): SigningKeys {
  const kept = new Map<string, { tokens: SigningTokens; until: number }>();
  return {
    keysFor: async (accountId) => {
      const now = clock.now();
      const hit = kept.get(accountId);
      if (hit && hit.until > now) return hit.tokens;
      const tokens = await keys.keysFor(accountId);
      if (tokens === null) {
        kept.delete(accountId);
        return null;
      }
      if (kept.size >= LIMIT) kept.clear();
      kept.set(accountId, { tokens, until: now + SIGNING_KEYS_TTL_MS });
      return tokens;
    },
  };
}
