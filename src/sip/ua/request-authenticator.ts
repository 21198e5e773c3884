import type { Clock } from '../../core/clock.js';
import { verifyBearer, type BearerPurpose } from '../auth/bearer.js';
import type { DigestAlgorithm } from '../auth/digest.js';
import type { DigestAuthenticator } from '../auth/digest-authenticator.js';
import type { AuthValue, SipRequest, SipResponse } from '../message/index.js';
import { responseTo } from '../transaction/response-to.js';
import type { Flow } from '../transport/flow.js';
import { digestOffer, type DigestOfferPolicy } from './digest-offer.js';
import type { AddressOfRecord, RegistrarDirectory } from './registrar-directory.js';

export interface RequestAuthenticatorOptions {
  /** Checks a bearer token's exp and nbf. */
  clock: Clock;
  directory: Pick<RegistrarDirectory, 'findUser' | 'tokenKey' | 'accountOf'>;
  authenticator: DigestAuthenticator;
  /** Which digest algorithms each client is challenged with (see digestOffer). */
  offer?: DigestOfferPolicy;
  /** Told why a request was refused (never with credentials). */
  onRefused?: (reason: string, request: SipRequest) => void;
}

export type Authenticated =
  { ok: true; aor: AddressOfRecord } | { ok: false; response: SipResponse };

/**
 * Who sent a request: digest credentials checked against an endpoint's HA1 (RFC 2617,
 * 7616, 8760), or on a WebSocket flow a bearer token from `JWT/Token/` (RFC 8898) with the
 * grant the purpose needs. The registrar asks this of REGISTER (the To user); the call layer
 * of INVITE (the From user). A failure comes with the response to send.
 */
export class RequestAuthenticator {
  constructor(private readonly options: RequestAuthenticatorOptions) {}

  async authenticate(
    request: SipRequest,
    flow: Flow,
    purpose: BearerPurpose,
    user: string,
  ): Promise<Authenticated> {
    const credentials = request.authorization();
    const bearer = credentials.find((c) => c.scheme.toLowerCase() === 'bearer');
    if (bearer && (flow.protocol === 'WS' || flow.protocol === 'WSS')) {
      return this.bearer(request, bearer, purpose, user);
    }
    const offered = digestOffer(this.options.offer ?? {}, request, flow);
    const digest = credentials.find(
      (c) =>
        c.scheme.toLowerCase() === 'digest' &&
        c.params.get('realm') === this.options.authenticator.realm,
    );
    if (!digest) return { ok: false, response: this.challenge(request, offered, false) };
    if (digest.params.get('username') !== user) {
      this.options.onRefused?.(
        `digest username is not the ${purpose === 'register' ? 'To' : 'From'} user`,
        request,
      );
      return { ok: false, response: this.challenge(request, offered, false) };
    }
    let found: AddressOfRecord | null = null;
    const verdict = await this.options.authenticator.verify(
      digest.params,
      { method: request.method, uri: request.uri },
      async (name) => {
        const entry = await this.options.directory.findUser(name);
        found = entry?.aor ?? null;
        return entry;
      },
      offered,
    );
    if (verdict.ok && found) return { ok: true, aor: found };
    // RFC 3261 22.2 and 22.4: credentials that fail are answered with a fresh challenge, so
    // the client knows they were refused; stale=true when only the nonce aged (RFC 7616
    // 3.3). A wrong password and an unknown user get the same answer.
    const reason = verdict.ok ? 'user vanished during the check' : verdict.reason;
    this.options.onRefused?.(reason, request);
    return {
      ok: false,
      response: this.challenge(request, offered, !verdict.ok && verdict.stale),
    };
  }

  /** A 401 with one digest challenge per algorithm offered to this client. */
  private challenge(
    request: SipRequest,
    offered: readonly DigestAlgorithm[],
    stale: boolean,
  ): SipResponse {
    const challenges = this.options.authenticator.challenges(stale, offered);
    return responseTo(request, 401, {
      headers: challenges.map((c) => ['WWW-Authenticate', c] as const),
    });
  }

  private async bearer(
    request: SipRequest,
    bearer: AuthValue,
    purpose: BearerPurpose,
    user: string,
  ): Promise<Authenticated> {
    const verdict = await verifyBearer(
      bearer.token68 ?? '',
      purpose,
      (authId) => this.options.directory.tokenKey(authId),
      this.options.clock,
    );
    if (!verdict.ok) {
      this.options.onRefused?.(verdict.reason, request);
      // RFC 8898 / RFC 6750 3: the error rides in a Bearer challenge.
      const challenge = `Bearer realm="${this.options.authenticator.realm}", error="${verdict.error}"`;
      return {
        ok: false,
        response: responseTo(request, verdict.status, {
          headers: [['WWW-Authenticate', challenge]],
        }),
      };
    }
    const { claims } = verdict;
    const owner = await this.options.directory.accountOf(claims.iss);
    // A registration binds the token's subject, so it needs one; a call may come without.
    const subject = claims.sub ?? (purpose === 'call' ? claims.iss : null);
    if (!owner || subject === null) {
      const reason = owner ? 'token has no sub' : 'token issuer is unknown';
      this.options.onRefused?.(reason, request);
      return { ok: false, response: responseTo(request, 403, { reason: 'Forbidden' }) };
    }
    // A token registers its own subject: a To of another user would bind the token's and
    // leave the client believing it is reachable as the one it named.
    if (purpose === 'register' && user !== subject) {
      this.options.onRefused?.('the To user is not the token subject', request);
      return {
        ok: false,
        response: responseTo(request, 403, {
          reason: `Forbidden (the token registers ${subject}, not ${user})`,
        }),
      };
    }
    return {
      ok: true,
      aor: {
        kind: 'token',
        ...owner,
        id: subject,
        user: subject,
        notAfter: claims.expiresAt,
        ...(claims.app !== null && { app: claims.app }),
      },
    };
  }
}
