import { createHash } from 'node:crypto';

/**
 * The realm voxgate challenges with (RFC 7616 3.3). It is fixed, not the public host, so that
 * the HA1 values stored for endpoints stay valid when the host name changes.
 */
export const DIGEST_REALM = 'voxgate';

export const md5Hex = (text: string): string => createHash('md5').update(text).digest('hex');
export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/** RFC 7616 3.4.2: A1 = username ":" realm ":" passwd; HA1 = H(A1). */
export function ha1(algorithm: 'MD5' | 'SHA-256', username: string, password: string): string {
  const a1 = `${username}:${DIGEST_REALM}:${password}`;
  return algorithm === 'MD5' ? md5Hex(a1) : sha256Hex(a1);
}
