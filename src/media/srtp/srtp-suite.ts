import { addon } from '../codec/native-addon.js';
import { checkIntegerInRange, checkUint8Array, describe } from '../codec/argument-checks.js';

/** The crypto suites voxgate speaks, by their SDES names (RFC 4568 6.2, RFC 7714 14.1). */
export const SRTP_SUITES = [
  'AES_CM_128_HMAC_SHA1_80',
  'AES_CM_128_HMAC_SHA1_32',
  'AEAD_AES_128_GCM',
] as const;
export type SrtpSuite = (typeof SRTP_SUITES)[number];

export interface SrtpSuiteParameters {
  /** The native addon's number for the suite. */
  readonly code: number;
  /** The DTLS-SRTP protection profile (RFC 5764 4.1.2, RFC 7714 14.2). */
  readonly dtlsProfile: number;
  readonly masterKeyLength: number;
  readonly masterSaltLength: number;
  /** Bytes an SRTP packet gains: the authentication tag. */
  readonly rtpOverhead: number;
  /** Bytes an SRTCP packet gains: the E flag and SRTCP index word, and the tag. */
  readonly rtcpOverhead: number;
}

export const SRTP_SUITE_PARAMETERS: Readonly<Record<SrtpSuite, SrtpSuiteParameters>> = {
  AES_CM_128_HMAC_SHA1_80: {
    code: 0,
    dtlsProfile: 0x0001,
    masterKeyLength: 16,
    masterSaltLength: 14,
    rtpOverhead: 10,
    rtcpOverhead: 14,
  },
  // RFC 5764 4.1.2: "SRTP_AES128_CM_HMAC_SHA1_32 ... srtcp_auth_tag_length 80": only SRTP's
  // tag is short.
  AES_CM_128_HMAC_SHA1_32: {
    code: 1,
    dtlsProfile: 0x0002,
    masterKeyLength: 16,
    masterSaltLength: 14,
    rtpOverhead: 4,
    rtcpOverhead: 14,
  },
  AEAD_AES_128_GCM: {
    code: 2,
    dtlsProfile: 0x0007,
    masterKeyLength: 16,
    masterSaltLength: 12,
    rtpOverhead: 16,
    rtcpOverhead: 20,
  },
};

export function checkSrtpSuite(value: unknown, name = 'suite'): SrtpSuite {
  if (!SRTP_SUITES.includes(value as SrtpSuite)) {
    throw new RangeError(
      `Expected one of ${SRTP_SUITES.join(', ')} for ${name} but received ${describe(value)}`,
    );
  }
  return value as SrtpSuite;
}

/** A master key and salt: what SDES carries in `inline:` and DTLS-SRTP exports per side. */
export interface SrtpMasterKey {
  masterKey: Uint8Array;
  masterSalt: Uint8Array;
}

/** Splits key || salt, as an SDES `inline:` key carries them (RFC 4568 6.1), once decoded. */
export function splitSrtpKeyAndSalt(suite: SrtpSuite, keyAndSalt: Uint8Array): SrtpMasterKey {
  const { masterKeyLength: k, masterSaltLength: s } = SRTP_SUITE_PARAMETERS[checkSrtpSuite(suite)];
  checkUint8Array(keyAndSalt, 'keyAndSalt');
  if (keyAndSalt.length !== k + s) {
    throw new RangeError(
      `Expected ${k + s} bytes of key and salt for ${suite} but received ${keyAndSalt.length}`,
    );
  }
  return { masterKey: keyAndSalt.slice(0, k), masterSalt: keyAndSalt.slice(k) };
}

/** How many bytes of keying material a DTLS-SRTP exporter must give (RFC 5764 4.2). */
export function dtlsSrtpMaterialLength(suite: SrtpSuite): number {
  const { masterKeyLength, masterSaltLength } = SRTP_SUITE_PARAMETERS[checkSrtpSuite(suite)];
  return 2 * (masterKeyLength + masterSaltLength);
}

/**
 * The two sides' master keys from the "EXTRACTOR-dtls_srtp" material (RFC 5764 4.2):
 * client_write_SRTP_master_key, server_write_SRTP_master_key, client_write_SRTP_master_salt,
 * server_write_SRTP_master_salt. The client protects with `client` and the server with
 * `server`; each unprotects with the other.
 */
export function splitDtlsSrtpMaterial(
  suite: SrtpSuite,
  material: Uint8Array,
): { client: SrtpMasterKey; server: SrtpMasterKey } {
  const { masterKeyLength: k, masterSaltLength: s } = SRTP_SUITE_PARAMETERS[checkSrtpSuite(suite)];
  checkUint8Array(material, 'material');
  if (material.length !== 2 * (k + s)) {
    throw new RangeError(
      `Expected ${2 * (k + s)} bytes of DTLS-SRTP keying material for ${suite} but received ${material.length}`,
    );
  }
  return {
    client: { masterKey: material.slice(0, k), masterSalt: material.slice(2 * k, 2 * k + s) },
    server: { masterKey: material.slice(k, 2 * k), masterSalt: material.slice(2 * k + s) },
  };
}

/** The key derivation labels of RFC 3711 4.3.2 (and 4.3.2's SRTCP ones). */
export const SrtpLabel = {
  rtpEncryption: 0,
  rtpAuthentication: 1,
  rtpSalt: 2,
  rtcpEncryption: 3,
  rtcpAuthentication: 4,
  rtcpSalt: 5,
} as const;

/**
 * The first `length` bytes of the key derivation PRF (RFC 3711 4.3.1, key derivation rate 0)
 * for a label: AES-CM keyed with the 16-byte master key over the master salt (14 bytes, or 12
 * zero-padded) with the label in its eighth byte. What a context does itself; exposed for the
 * RFC's vectors and for diagnosing a peer.
 */
export function deriveSrtpKey(
  masterKey: Uint8Array,
  masterSalt: Uint8Array,
  label: number,
  length: number,
): Buffer {
  if (checkUint8Array(masterKey, 'masterKey').length !== 16) {
    throw new RangeError(`Expected 16 bytes for masterKey but received ${masterKey.length}`);
  }
  const saltLength = checkUint8Array(masterSalt, 'masterSalt').length;
  if (saltLength !== 12 && saltLength !== 14) {
    throw new RangeError(`Expected 12 or 14 bytes for masterSalt but received ${saltLength}`);
  }
  checkIntegerInRange(label, 0, 255, 'label');
  checkIntegerInRange(length, 1, 1 << 24, 'length');
  return addon.deriveSrtpKey(masterKey, masterSalt, label, length);
}
