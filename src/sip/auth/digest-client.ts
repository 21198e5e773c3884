import { randomBytes } from 'node:crypto';
import { digestHash, digestResponse, parseAlgorithm, quote } from './digest.js';

export interface DigestChallengeParams {
  realm: string;
  nonce: string;
  opaque?: string;
  algorithm?: string;
  /** The qop-options of the challenge, e.g. "auth" or "auth,auth-int". */
  qop?: string;
}

/**
 * Answers a digest challenge for an outbound request (RFC 3261 22.2; used for sip_auth_username
 * and origination URIs with credentials). Returns the Authorization header value, or null when
 * the challenge asks for an algorithm or qop this client cannot give.
 */
export function answerDigestChallenge(
  challenge: DigestChallengeParams,
  credentials: { username: string; password: string },
  request: { method: string; uri: string },
  nc = 1,
  cnonce: string = randomBytes(12).toString('base64url'),
): string | null {
  const algorithm = parseAlgorithm(challenge.algorithm);
  if (!algorithm) return null;
  const offered = challenge.qop?.split(',').map((q) => q.trim().toLowerCase());
  if (offered && !offered.includes('auth')) return null;
  const qop = offered ? ('auth' as const) : undefined;
  const ncText = nc.toString(16).padStart(8, '0');
  const ha1 = digestHash(
    algorithm,
    `${credentials.username}:${challenge.realm}:${credentials.password}`,
  );
  const response = digestResponse({
    algorithm,
    ha1,
    method: request.method,
    uri: request.uri,
    nonce: challenge.nonce,
    ...(qop ? { qop, nc: ncText, cnonce } : {}),
  });
  const parts = [
    `username=${quote(credentials.username)}`,
    `realm=${quote(challenge.realm)}`,
    `nonce=${quote(challenge.nonce)}`,
    `uri=${quote(request.uri)}`,
    `response=${quote(response)}`,
    `algorithm=${algorithm}`,
  ];
  if (challenge.opaque !== undefined) parts.push(`opaque=${quote(challenge.opaque)}`);
  // RFC 7616 3.4: qop and nc are unquoted tokens; cnonce is quoted.
  if (qop) parts.push(`qop=${qop}`, `nc=${ncText}`, `cnonce=${quote(cnonce)}`);
  return `Digest ${parts.join(', ')}`;
}
