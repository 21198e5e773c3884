import { createHash } from 'node:crypto';

/**
 * RFC 7616 digest arithmetic, shared by the server (verifying) and the client (answering a
 * challenge). SIP uses it as RFC 3261 22.4 and RFC 8760 describe: qop=auth, MD5 or SHA-256,
 * optionally the -sess variants.
 */
export type DigestAlgorithm = 'MD5' | 'MD5-sess' | 'SHA-256' | 'SHA-256-sess';

export const DIGEST_ALGORITHMS: readonly DigestAlgorithm[] = [
  'MD5',
  'MD5-sess',
  'SHA-256',
  'SHA-256-sess',
];

export function parseAlgorithm(value: string | undefined): DigestAlgorithm | null {
  // RFC 7616 3.3: "If this is not present, it is assumed to be "MD5"." Names are case-insensitive.
  if (value === undefined) return 'MD5';
  return DIGEST_ALGORITHMS.find((a) => a.toLowerCase() === value.toLowerCase()) ?? null;
}

export const baseAlgorithm = (algorithm: DigestAlgorithm): 'MD5' | 'SHA-256' =>
  algorithm.startsWith('SHA-256') ? 'SHA-256' : 'MD5';

const isSession = (algorithm: DigestAlgorithm): boolean => algorithm.endsWith('-sess');

export function digestHash(algorithm: DigestAlgorithm, text: string): string {
  return createHash(baseAlgorithm(algorithm) === 'MD5' ? 'md5' : 'sha256')
    .update(text, 'utf8')
    .digest('hex');
}

/** RFC 7616 3.4.2: A1 = username:realm:passwd, and for -sess H(that):nonce:cnonce. */
export function sessionHa1(
  algorithm: DigestAlgorithm,
  ha1: string,
  nonce: string,
  cnonce: string | undefined,
): string {
  return isSession(algorithm) ? digestHash(algorithm, `${ha1}:${nonce}:${cnonce ?? ''}`) : ha1;
}

export interface DigestResponseInput {
  algorithm: DigestAlgorithm;
  /** H(username:realm:password), before any -sess step. */
  ha1: string;
  method: string;
  uri: string;
  nonce: string;
  /** Absent only for RFC 2069 style answers without qop. */
  qop?: 'auth';
  nc?: string;
  cnonce?: string;
}

/**
 * RFC 7616 3.4.1: response = KD(H(A1), nonce:nc:cnonce:qop:H(A2)) with A2 = method:uri;
 * without qop (RFC 2617 3.2.2.1, RFC 2069 compatibility) response = KD(H(A1), nonce:H(A2)).
 */
export function digestResponse(input: DigestResponseInput): string {
  const { algorithm, method, uri, nonce } = input;
  const ha1 = sessionHa1(algorithm, input.ha1, nonce, input.cnonce);
  const ha2 = digestHash(algorithm, `${method}:${uri}`);
  const data = input.qop
    ? `${nonce}:${input.nc}:${input.cnonce}:${input.qop}:${ha2}`
    : `${nonce}:${ha2}`;
  return digestHash(algorithm, `${ha1}:${data}`);
}

/** A quoted-string per RFC 3261 25.1: backslash and double quote escaped. */
export const quote = (value: string): string => `"${value.replace(/(["\\])/g, '\\$1')}"`;
