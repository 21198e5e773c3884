/**
 * The SRTP protection profiles DTLS-SRTP can negotiate (use_srtp, RFC 5764 4.1.2), with their
 * master key and salt lengths in bytes: RFC 5764 4.1.2 for the AES-CM ones, RFC 7714 14.2 for
 * AEAD_AES_128_GCM and AEAD_AES_256_GCM (12-byte salts). Names are OpenSSL's.
 */
export const SRTP_PROFILES = {
  SRTP_AEAD_AES_128_GCM: { keyLength: 16, saltLength: 12 },
  SRTP_AEAD_AES_256_GCM: { keyLength: 32, saltLength: 12 },
  SRTP_AES128_CM_SHA1_80: { keyLength: 16, saltLength: 14 },
  SRTP_AES128_CM_SHA1_32: { keyLength: 16, saltLength: 14 },
} as const;

export type SrtpProfile = keyof typeof SRTP_PROFILES;

/** What voxgate offers, most preferred first: browsers offer all three. */
export const DEFAULT_SRTP_PROFILES: readonly SrtpProfile[] = [
  'SRTP_AEAD_AES_128_GCM',
  'SRTP_AES128_CM_SHA1_80',
  'SRTP_AES128_CM_SHA1_32',
];

/** RFC 5764 4.2: the exporter label. */
export const SRTP_EXPORTER_LABEL = 'EXTRACTOR-dtls_srtp';

/** The DTLS role: the client sent the ClientHello. */
export type DtlsRole = 'client' | 'server';

/** The master keys and salts of both directions, from the side of one endpoint. */
export interface SrtpKeys {
  profile: SrtpProfile;
  /** What this side protects what it sends with. */
  localMasterKey: Buffer;
  localMasterSalt: Buffer;
  /** What this side unprotects what it receives with. */
  remoteMasterKey: Buffer;
  remoteMasterSalt: Buffer;
}

export function isSrtpProfile(name: string): name is SrtpProfile {
  return Object.hasOwn(SRTP_PROFILES, name);
}

/** Bytes of keying material a profile needs: two keys and two salts. */
export function srtpKeyingMaterialLength(profile: SrtpProfile): number {
  const { keyLength, saltLength } = SRTP_PROFILES[profile];
  return 2 * (keyLength + saltLength);
}

/**
 * RFC 5764 4.2: the exported material is "client_write_SRTP_master_key[SRTPSecurityParams.
 * master_key_len]; server_write_SRTP_master_key[...]; client_write_SRTP_master_salt[...];
 * server_write_SRTP_master_salt[...]". The client's write keys are the client's local ones.
 */
export function splitSrtpKeyingMaterial(
  material: Uint8Array,
  profile: SrtpProfile,
  role: DtlsRole,
): SrtpKeys {
  const { keyLength, saltLength } = SRTP_PROFILES[profile];
  if (material.length !== srtpKeyingMaterialLength(profile)) {
    throw new RangeError(
      `Expected ${srtpKeyingMaterialLength(profile)} bytes of keying material for ${profile} but received ${material.length}`,
    );
  }
  const bytes = Buffer.from(material);
  const clientKey = bytes.subarray(0, keyLength);
  const serverKey = bytes.subarray(keyLength, 2 * keyLength);
  const clientSalt = bytes.subarray(2 * keyLength, 2 * keyLength + saltLength);
  const serverSalt = bytes.subarray(2 * keyLength + saltLength);
  const client = role === 'client';
  return {
    profile,
    localMasterKey: client ? clientKey : serverKey,
    localMasterSalt: client ? clientSalt : serverSalt,
    remoteMasterKey: client ? serverKey : clientKey,
    remoteMasterSalt: client ? serverSalt : clientSalt,
  };
}
