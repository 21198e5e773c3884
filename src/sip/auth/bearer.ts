import { decodeJwt, jwtVerify, errors } from 'jose';
import type { Clock } from '../../core/clock.js';

/** The grants of an access token made by `JWT/Token/` (wire-compat.md). */
export interface AccessClaims {
  iss: string;
  sub: string | null;
  app: string | null;
  incomingAllow: boolean;
  outgoingAllow: boolean;
  /** When the token stops being valid, epoch ms (its exp). */
  expiresAt: number;
}

export type BearerVerdict =
  | { ok: true; claims: AccessClaims }
  /**
   * RFC 8898 / RFC 6750 3.1: a bad or expired token is a 401 with error="invalid_token"; a valid
   * token without the needed grant is a 403 with error="insufficient_scope".
   */
  | { ok: false; status: 401 | 403; error: 'invalid_token' | 'insufficient_scope'; reason: string };

/** What the SIP request wants to do, and so which grant it needs. */
export type BearerPurpose = 'register' | 'call';

/**
 * Verifies `Authorization: Bearer <jwt>` from a SIP-over-WebSocket client. The token is HS256,
 * signed with the auth token of the account named by `iss`; `keyFor` looks that up.
 */
export async function verifyBearer(
  token: string,
  purpose: BearerPurpose,
  keyFor: (authId: string) => Promise<string | null>,
  clock: Clock,
): Promise<BearerVerdict> {
  const invalid = (reason: string): BearerVerdict => ({
    ok: false,
    status: 401,
    error: 'invalid_token',
    reason,
  });
  let iss: unknown;
  try {
    iss = decodeJwt(token).iss;
  } catch {
    return invalid('not a JWT');
  }
  if (typeof iss !== 'string') return invalid('token has no iss');
  const key = await keyFor(iss);
  if (!key) return invalid('unknown issuer');
  let payload;
  try {
    ({ payload } = await jwtVerify(token, new TextEncoder().encode(key), {
      algorithms: ['HS256'],
      currentDate: new Date(clock.now()),
      requiredClaims: ['exp'],
    }));
  } catch (error) {
    if (error instanceof errors.JWTExpired) return invalid('token expired');
    if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'nbf')
      return invalid('token not yet valid');
    return invalid('bad token signature or claims');
  }
  const voice = (
    payload.per as { voice?: { incoming_allow?: unknown; outgoing_allow?: unknown } } | undefined
  )?.voice;
  const claims: AccessClaims = {
    iss,
    sub: typeof payload.sub === 'string' ? payload.sub : null,
    app: typeof payload.app === 'string' ? payload.app : null,
    incomingAllow: voice?.incoming_allow === true,
    outgoingAllow: voice?.outgoing_allow === true,
    expiresAt: (payload.exp as number) * 1000,
  };
  // Registering is how a client receives calls; sending an INVITE is an outgoing call.
  if (purpose === 'register' && !claims.incomingAllow) {
    return {
      ok: false,
      status: 403,
      error: 'insufficient_scope',
      reason: 'token does not allow incoming calls',
    };
  }
  if (purpose === 'register' && claims.sub === null) {
    return invalid('a token that registers must name its subject (sub)');
  }
  if (purpose === 'call' && !claims.outgoingAllow) {
    return {
      ok: false,
      status: 403,
      error: 'insufficient_scope',
      reason: 'token does not allow outgoing calls',
    };
  }
  return { ok: true, claims };
}
