import { createSecureContext } from 'node:tls';

/** A server certificate (chain) and its private key, both PEM. */
export interface TlsCredentials {
  cert: string | Buffer;
  key: string | Buffer;
}

/**
 * Checks credentials at the public edge: a bad certificate, or a key that does not match it,
 * stops the start with a clear message rather than failing every handshake later.
 */
export function checkCredentials(credentials: TlsCredentials): void {
  for (const name of ['cert', 'key'] as const) {
    const value: unknown = credentials[name];
    if (!(typeof value === 'string' || Buffer.isBuffer(value)) || value.length === 0) {
      throw new TypeError(
        `Expected a PEM string or Buffer for ${name} but received ${kind(value)}`,
      );
    }
  }
  try {
    createSecureContext({ cert: credentials.cert, key: credentials.key });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Expected a PEM certificate and its private key for TLS: ${reason}`, {
      cause: error,
    });
  }
}

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Buffer.isBuffer(value)) return 'an empty Buffer';
  return typeof value === 'string' ? 'an empty string' : typeof value;
}
