import { createHash, X509Certificate } from 'node:crypto';

/**
 * The hash functions of RFC 8122's `a=fingerprint` that voxgate checks a peer's certificate
 * with, weakest first, with OpenSSL's name of each and its digest length in bytes. MD5 and MD2,
 * which the grammar also names, are not accepted.
 */
const HASHES = {
  'sha-1': { openssl: 'SHA1', bytes: 20 },
  'sha-224': { openssl: 'SHA224', bytes: 28 },
  'sha-256': { openssl: 'SHA256', bytes: 32 },
  'sha-384': { openssl: 'SHA384', bytes: 48 },
  'sha-512': { openssl: 'SHA512', bytes: 64 },
} as const;

export type FingerprintAlgorithm = keyof typeof HASHES;
export const FINGERPRINT_ALGORITHMS = Object.keys(HASHES) as FingerprintAlgorithm[];

/** One `a=fingerprint` value: `sha-256 AB:CD:...`. */
export interface DtlsFingerprint {
  algorithm: FingerprintAlgorithm;
  /** Upper-case hex pairs joined by colons. */
  value: string;
}

export class DtlsFingerprintError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DtlsFingerprintError';
  }
}

/**
 * An `a=fingerprint` attribute's value (RFC 8122 5: `hash-func SP fingerprint`, the hex in
 * upper case; lower case is taken too, as some endpoints send it).
 */
export function parseDtlsFingerprint(text: string): DtlsFingerprint {
  const match = /^\s*([A-Za-z0-9-]+)\s+([0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2})*)\s*$/.exec(text);
  if (!match) {
    throw new DtlsFingerprintError(
      `Expected a fingerprint such as "sha-256 AB:CD:..." but received ${JSON.stringify(text)}`,
    );
  }
  const algorithm = match[1]!.toLowerCase();
  if (!(algorithm in HASHES)) {
    throw new DtlsFingerprintError(
      `Expected a fingerprint hash function among ${FINGERPRINT_ALGORITHMS.join(', ')} but received ${JSON.stringify(match[1])}`,
    );
  }
  const hash = HASHES[algorithm as FingerprintAlgorithm];
  const value = match[2]!.toUpperCase();
  if (value.split(':').length !== hash.bytes) {
    throw new DtlsFingerprintError(
      `Expected ${hash.bytes} bytes in a ${algorithm} fingerprint but received ${value.split(':').length}`,
    );
  }
  return { algorithm: algorithm as FingerprintAlgorithm, value };
}

/**
 * The peer's `a=fingerprint` values voxgate can check a certificate with (RFC 8122 5: an
 * endpoint selects among the hash functions offered those it supports), each parsed; the
 * others are left out. Throws a DtlsFingerprintError naming why the first one could not be
 * taken when none can.
 */
export function usableFingerprints(texts: readonly string[]): DtlsFingerprint[] {
  const usable: DtlsFingerprint[] = [];
  let refusal: DtlsFingerprintError | null = null;
  for (const text of texts) {
    try {
      usable.push(parseDtlsFingerprint(text));
    } catch (error) {
      if (!(error instanceof DtlsFingerprintError)) throw error;
      refusal ??= error;
    }
  }
  if (usable.length === 0 && refusal !== null) throw refusal;
  return usable;
}

/** The `a=fingerprint` value: `sha-256 AB:CD:...`. */
export function formatDtlsFingerprint(fingerprint: DtlsFingerprint): string {
  return `${fingerprint.algorithm} ${fingerprint.value}`;
}

/** A certificate's fingerprint (the hash of its DER form, RFC 8122 5). */
export function certificateFingerprint(
  certPem: string,
  algorithm: FingerprintAlgorithm = 'sha-256',
): DtlsFingerprint {
  const der = new X509Certificate(certPem).raw;
  const digest = createHash(HASHES[algorithm].openssl.toLowerCase()).update(der).digest();
  return { algorithm, value: hexWithColons(digest) };
}

function hexWithColons(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
}

/** What the native endpoint compares the peer's certificate with. */
export interface FingerprintCheck {
  /** OpenSSL's digest name. */
  digest: string;
  /** The certificate must hash to one of these. */
  values: Buffer[];
}

/**
 * RFC 8122 5: "An endpoint MUST select the set of fingerprints that use its most preferred hash
 * function (out of those offered by the peer) and verify that each certificate used matches one
 * fingerprint out of that set." The strongest hash offered is the one preferred.
 */
export function fingerprintCheck(fingerprints: readonly DtlsFingerprint[]): FingerprintCheck {
  if (fingerprints.length === 0) {
    throw new DtlsFingerprintError(
      "Expected at least one fingerprint of the peer's certificate (its SDP's a=fingerprint)",
    );
  }
  const strongest = fingerprints.reduce((best, f) =>
    FINGERPRINT_ALGORITHMS.indexOf(f.algorithm) > FINGERPRINT_ALGORITHMS.indexOf(best.algorithm)
      ? f
      : best,
  ).algorithm;
  return {
    digest: HASHES[strongest].openssl,
    values: fingerprints
      .filter((f) => f.algorithm === strongest)
      .map((f) => Buffer.from(f.value.replace(/:/g, ''), 'hex')),
  };
}
