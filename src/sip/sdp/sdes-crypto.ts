import { randomBytes } from 'node:crypto';
import { SdpParseError } from './sdp-parse-error.js';

/*
 * SDP Security Descriptions (RFC 4568): the a=crypto attribute that carries an SRTP master
 * key and salt in the clear of the SDP, which is why voxgate takes it only over SIP over TLS.
 *
 *   a=crypto:<tag> <crypto-suite> inline:<base64 key||salt>[|<lifetime>][|<MKI>:<length>]
 */

/**
 * The suites voxgate offers and accepts, in its order of preference. Both take a 16-byte
 * AES key and a 14-byte salt (RFC 4568 6.2.1, 6.2.2); _32 shortens only SRTP's tag.
 */
export const SDES_SUITES = ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32'] as const;
export type SdesSuite = (typeof SDES_SUITES)[number];

/** Bytes of key || salt every suite above carries in its inline: parameter. */
export const SDES_KEY_SALT_LENGTH = 30;

/** One a=crypto line as read. */
export interface SdesCrypto {
  /** 1 to 9 digits (RFC 4568 9.1): the answer's line carries the offer's tag. */
  readonly tag: number;
  /** As written; not necessarily one voxgate knows. */
  readonly suite: string;
  /** The decoded key || salt of the first key parameter. */
  readonly keySalt: Buffer;
  /** How many key parameters the line has (several only with MKIs). */
  readonly keyCount: number;
  /** `2^31`, `1048576`, or null when not given. */
  readonly lifetime: string | null;
  readonly mki: { readonly value: number; readonly length: number } | null;
  /** Session parameters (KDR=, UNENCRYPTED_SRTP, ...), as written. */
  readonly sessionParams: readonly string[];
}

/** What voxgate writes: one key, no lifetime, no MKI, no session parameters. */
export interface OutgoingCrypto {
  readonly tag: number;
  readonly suite: SdesSuite;
  readonly keySalt: Uint8Array;
}

const CRYPTO = /^crypto:(\d{1,9}) ([A-Za-z0-9_]+) (\S+)((?: \S+)*)$/;
const INLINE =
  /^inline:([A-Za-z0-9+/]+={0,2})(?:\|(2\^\d{1,2}|\d{1,20}))?(?:\|(\d{1,20}):(\d{1,3}))?$/;
const BASE64_OF_30 = 40;

/** Whether a suite is one voxgate speaks (RFC 4568 is case-sensitive: names are as written). */
export function isSdesSuite(suite: string): suite is SdesSuite {
  return (SDES_SUITES as readonly string[]).includes(suite);
}

function keyParameter(text: string, line: number | undefined) {
  const match = INLINE.exec(text);
  if (match === null) {
    throw new SdpParseError(
      'a=crypto key parameter must be inline: with base64 key and salt, then lifetime and MKI',
      line,
    );
  }
  const encoded = match[1]!;
  const keySalt = Buffer.from(encoded, 'base64');
  // Strict base64: what decodes must encode back to the same text (no stray bits, padding).
  const canonical = keySalt.toString('base64');
  if (canonical !== encoded && canonical.replace(/=+$/, '') !== encoded) {
    throw new SdpParseError('a=crypto inline: key is not valid base64', line);
  }
  const mki = match[3] === undefined ? null : { value: Number(match[3]), length: Number(match[4]) };
  return { keySalt, lifetime: match[2] ?? null, mki };
}

/**
 * Reads an a=crypto value (the text after `a=`). Breaking RFC 4568 9.1's grammar is an
 * SdpParseError; a well-formed line voxgate cannot use is read, and `unusableCrypto` says why.
 */
export function parseCrypto(value: string, line?: number): SdesCrypto {
  const match = CRYPTO.exec(value.trimEnd());
  if (match === null) {
    throw new SdpParseError('a=crypto must be a tag, a crypto suite and an inline: key', line);
  }
  const keys = match[3]!.split(';').map((text) => keyParameter(text, line));
  const first = keys[0]!;
  return {
    tag: Number(match[1]),
    suite: match[2]!,
    keySalt: first.keySalt,
    keyCount: keys.length,
    lifetime: first.lifetime,
    mki: first.mki,
    sessionParams: match[4]!.split(' ').filter(Boolean),
  };
}

/** Why voxgate cannot take a crypto line, or null when it can. Names no key material. */
export function unusableCrypto(crypto: SdesCrypto): string | null {
  if (!isSdesSuite(crypto.suite)) {
    return `suite ${crypto.suite} is not one of ${SDES_SUITES.join(', ')}`;
  }
  if (crypto.keySalt.length !== SDES_KEY_SALT_LENGTH) {
    return `${crypto.suite} takes ${SDES_KEY_SALT_LENGTH} bytes of key and salt, not ${crypto.keySalt.length}`;
  }
  // voxgate's SRTP contexts carry no MKI field, so a key that needs one cannot be used.
  if (crypto.keyCount > 1 || crypto.mki !== null) return 'an MKI is not supported';
  // RFC 4568 6.3: an answerer that does not understand a session parameter must not accept
  // the crypto line; KDR=0 is the only one voxgate's SRTP runs with.
  const unknown = crypto.sessionParams.find((p) => p !== 'KDR=0');
  if (unknown !== undefined) return `session parameter ${unknown} is not supported`;
  return null;
}

/** The a=crypto value voxgate writes (without `a=`). */
export function formatCrypto(crypto: OutgoingCrypto): string {
  if (!isSdesSuite(crypto.suite)) throw new RangeError(`Expected an SDES suite: ${crypto.suite}`);
  if (crypto.keySalt.length !== SDES_KEY_SALT_LENGTH) {
    throw new RangeError(
      `Expected ${SDES_KEY_SALT_LENGTH} bytes of key and salt but received ${crypto.keySalt.length}`,
    );
  }
  const inline = Buffer.from(crypto.keySalt).toString('base64');
  // RFC 4568 6.1: 30 bytes are 40 base64 characters, no padding.
  if (inline.length !== BASE64_OF_30) throw new Error('unexpected base64 length');
  return `crypto:${crypto.tag} ${crypto.suite} inline:${inline}`;
}

/** A fresh random master key and salt (RFC 4568 6.1: from a cryptographically strong source). */
export function freshKeySalt(): Buffer {
  return randomBytes(SDES_KEY_SALT_LENGTH);
}

/** The profile SDES-SRTP audio is offered and answered with (RFC 3711 12, RFC 4568 3.1.4). */
export const SDES_PROFILE = 'RTP/SAVP';
