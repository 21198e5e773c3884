import { describe, expect, it } from 'vitest';
import {
  splitSrtpKeyingMaterial,
  srtpKeyingMaterialLength,
} from '../../../../src/media/dtls/srtp-keys.js';

const material = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => i));
const range = (from: number, to: number) => material(to).subarray(from);

describe('SRTP keys from the DTLS exporter (RFC 5764 4.2)', () => {
  it('splits client key, server key, client salt, server salt; local by role', () => {
    expect(srtpKeyingMaterialLength('SRTP_AES128_CM_SHA1_80')).toBe(60);
    const client = splitSrtpKeyingMaterial(material(60), 'SRTP_AES128_CM_SHA1_80', 'client');
    expect(client).toEqual({
      profile: 'SRTP_AES128_CM_SHA1_80',
      localMasterKey: range(0, 16),
      remoteMasterKey: range(16, 32),
      localMasterSalt: range(32, 46),
      remoteMasterSalt: range(46, 60),
    });
    const server = splitSrtpKeyingMaterial(material(60), 'SRTP_AES128_CM_SHA1_80', 'server');
    expect(server.localMasterKey).toEqual(range(16, 32));
    expect(server.remoteMasterSalt).toEqual(range(32, 46));
  });

  it('uses 12-byte salts for the AEAD profiles (RFC 7714)', () => {
    expect(srtpKeyingMaterialLength('SRTP_AEAD_AES_128_GCM')).toBe(56);
    expect(srtpKeyingMaterialLength('SRTP_AEAD_AES_256_GCM')).toBe(88);
    const keys = splitSrtpKeyingMaterial(material(56), 'SRTP_AEAD_AES_128_GCM', 'client');
    expect(keys.localMasterSalt).toEqual(range(32, 44));
    expect(keys.remoteMasterSalt).toEqual(range(44, 56));
    expect(() => splitSrtpKeyingMaterial(material(60), 'SRTP_AEAD_AES_128_GCM', 'client')).toThrow(
      'Expected 56 bytes of keying material for SRTP_AEAD_AES_128_GCM but received 60',
    );
  });
});
