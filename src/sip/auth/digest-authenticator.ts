import { timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import {
  baseAlgorithm,
  digestResponse,
  parseAlgorithm,
  quote,
  type DigestAlgorithm,
} from './digest.js';
import { NonceIssuer } from './nonce-issuer.js';

/** What a credential lookup returns: HA1 = H(username:realm:password) per base algorithm. */
export interface DigestSecret {
  ha1(algorithm: 'MD5' | 'SHA-256'): string;
}

export type DigestVerdict =
  | { ok: true; username: string }
  | {
      ok: false;
      /** Answer with fresh challenges; stale=true when the nonce only expired. */
      stale: boolean;
      reason: string;
    };

export interface DigestAuthenticatorOptions {
  realm: string;
  /** Shared by every node that should accept the others' nonces. */
  secret: Buffer;
  clock: Clock;
  nonceLifetimeMs?: number;
  /**
   * The algorithms accepted, and offered in this order unless a challenge names its own
   * (SHA-256 then MD5 by default).
   */
  algorithms?: DigestAlgorithm[];
}

/**
 * The server side of SIP digest authentication (RFC 3261 22, RFC 7616, RFC 8760): issues
 * challenges, and verifies Authorization / Proxy-Authorization credentials against a stored HA1.
 */
export class DigestAuthenticator {
  readonly realm: string;
  private readonly nonces: NonceIssuer;
  private readonly algorithms: DigestAlgorithm[];
  private readonly opaque: string;

  constructor(options: DigestAuthenticatorOptions) {
    this.realm = options.realm;
    this.nonces = new NonceIssuer(options.secret, options.clock, options.nonceLifetimeMs);
    this.algorithms = options.algorithms ?? ['SHA-256', 'MD5'];
    this.opaque = options.secret.subarray(0, 8).toString('hex');
  }

  /**
   * WWW-Authenticate (or Proxy-Authenticate) values, one per algorithm offered, in the order
   * given. RFC 8760 2.4: a UAS may offer several algorithms, each in its own header field,
   * in the order it would prefer them used; the UAC takes the topmost it supports (2.5). One
   * nonce serves all of them. Algorithms not accepted here are left out.
   */
  challenges(stale = false, offered: readonly DigestAlgorithm[] = this.algorithms): string[] {
    const nonce = this.nonces.issue();
    const usable = offered.filter((a) => this.algorithms.includes(a));
    return (usable.length > 0 ? usable : this.algorithms).map(
      (algorithm) =>
        `Digest realm=${quote(this.realm)}, nonce=${quote(nonce)}, opaque=${quote(this.opaque)}, ` +
        `algorithm=${algorithm}, qop="auth"${stale ? ', stale=true' : ''}`,
    );
  }

  /**
   * Checks credentials (the auth-params of a Digest Authorization header, unquoted) for a
   * request. `lookup` finds the user's secret; null means no such user. `offered` is what this
   * client's challenges carried: an answer with another algorithm is refused.
   */
  async verify(
    params: ReadonlyMap<string, string>,
    request: { method: string; uri: string },
    lookup: (username: string) => Promise<DigestSecret | null>,
    offered: readonly DigestAlgorithm[] = this.algorithms,
  ): Promise<DigestVerdict> {
    const fail = (reason: string, stale = false): DigestVerdict => ({ ok: false, stale, reason });
    const username = params.get('username');
    const nonce = params.get('nonce');
    const uri = params.get('uri');
    const response = params.get('response');
    if (!username || !nonce || !uri || !response)
      return fail('credentials lack username, nonce, uri or response');
    if (params.get('realm') !== this.realm) return fail(`realm is not ${this.realm}`);
    const algorithm = parseAlgorithm(params.get('algorithm'));
    if (!algorithm || !this.algorithms.includes(algorithm) || !offered.includes(algorithm))
      return fail('algorithm not offered');
    // RFC 7616 3.4: the uri must name the request's target; a credential for another URI is
    // not valid for this request (RFC 2617 3.2.2.5).
    if (uri !== request.uri) return fail('digest uri does not match the Request-URI');
    // We always offer qop=auth, so a client that understood the challenge answers with it.
    if (params.get('qop')?.toLowerCase() !== 'auth') return fail('qop=auth is required');
    const nc = params.get('nc');
    const cnonce = params.get('cnonce');
    if (!nc || !/^[0-9a-fA-F]{8}$/.test(nc) || !cnonce)
      return fail('qop=auth needs nc (8 hex digits) and cnonce');

    const freshness = this.nonces.check(nonce);
    if (freshness === 'forged') return fail('nonce was not issued here');

    const secret = await lookup(username);
    if (!secret) return fail('unknown user');
    const expected = digestResponse({
      algorithm,
      ha1: secret.ha1(baseAlgorithm(algorithm)),
      method: request.method,
      uri,
      nonce,
      qop: 'auth',
      nc,
      cnonce,
    });
    if (!sameHex(expected, response)) return fail('wrong response (bad password)');
    // RFC 7616 3.3 stale: "the nonce value was stale ... but the digest was valid", so the
    // client may retry with the same credentials and a new nonce without asking the user.
    if (freshness === 'stale') return fail('nonce expired', true);
    if (!this.nonces.acceptCount(nonce, parseInt(nc, 16))) return fail('nonce count replayed');
    return { ok: true, username };
  }
}

function sameHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given.toLowerCase(), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
