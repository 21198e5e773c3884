import { answerDigestChallenge } from './digest-client.js';
import type { AuthValue, SipRequest, SipResponse } from '../message/index.js';

/**
 * What answers a digest challenge. With a realm, only challenges of that realm are answered:
 * the credentials of one carrier are not given to another's proxy on the way.
 */
export interface DigestCredentials {
  username: string;
  password: string;
  realm?: string | null;
}

/** The credentials header that answers a challenge, and whether the challenge was stale. */
export interface ChallengeAnswer {
  header: 'Authorization' | 'Proxy-Authorization';
  value: string;
  /** RFC 7616 3.3: the nonce merely expired; the same credentials may be tried again. */
  stale: boolean;
}

/**
 * RFC 3261 22.2 and 22.3: credentials for `request` from the first digest challenge of a 401
 * (WWW-Authenticate, answered in Authorization) or 407 (Proxy-Authenticate, answered in
 * Proxy-Authorization) that this client can answer; null when none can be.
 */
export function answerChallenge(
  response: SipResponse,
  request: SipRequest,
  credentials: DigestCredentials,
): ChallengeAnswer | null {
  let challenges: AuthValue[];
  try {
    challenges =
      response.status === 401 ? response.wwwAuthenticate() : response.proxyAuthenticate();
  } catch {
    return null; // a challenge that does not parse cannot be answered
  }
  const header = response.status === 401 ? 'Authorization' : 'Proxy-Authorization';
  for (const challenge of challenges) {
    if (challenge.scheme.toLowerCase() !== 'digest') continue;
    const realm = challenge.params.get('realm');
    const nonce = challenge.params.get('nonce');
    if (realm === undefined || nonce === undefined) continue;
    if (credentials.realm && credentials.realm !== realm) continue;
    const value = answerDigestChallenge(
      {
        realm,
        nonce,
        opaque: challenge.params.get('opaque'),
        algorithm: challenge.params.get('algorithm'),
        qop: challenge.params.get('qop'),
      },
      credentials,
      { method: request.method, uri: request.uri },
    );
    if (value !== null) {
      const stale = challenge.params.get('stale')?.toLowerCase() === 'true';
      return { header, value, stale };
    }
  }
  return null;
}
