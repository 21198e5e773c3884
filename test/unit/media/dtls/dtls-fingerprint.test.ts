import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateDtlsCertificate } from '../../../../src/media/dtls/dtls-certificate.js';
import {
  certificateFingerprint,
  fingerprintCheck,
  formatDtlsFingerprint,
  parseDtlsFingerprint,
} from '../../../../src/media/dtls/dtls-fingerprint.js';

const sha256 = Array.from({ length: 32 }, (_, i) => (i * 7).toString(16).padStart(2, '0')).join(
  ':',
);

describe('DTLS fingerprints (RFC 8122)', () => {
  it('parses and formats a=fingerprint values, taking lower case too', () => {
    const parsed = parseDtlsFingerprint(`SHA-256 ${sha256}`);
    expect(parsed).toEqual({ algorithm: 'sha-256', value: sha256.toUpperCase() });
    expect(formatDtlsFingerprint(parsed)).toBe(`sha-256 ${sha256.toUpperCase()}`);
  });

  it('refuses a wrong length, an unknown hash and a malformed value', () => {
    expect(() => parseDtlsFingerprint('sha-256 AB:CD')).toThrow(
      'Expected 32 bytes in a sha-256 fingerprint but received 2',
    );
    expect(() => parseDtlsFingerprint(`md5 ${sha256}`)).toThrow(
      'Expected a fingerprint hash function among sha-1, sha-224, sha-256, sha-384, sha-512 but received "md5"',
    );
    expect(() => parseDtlsFingerprint('sha-256 ABCD')).toThrow(
      'Expected a fingerprint such as "sha-256 AB:CD:..." but received "sha-256 ABCD"',
    );
  });

  it("computes a certificate's fingerprint as Node does", () => {
    const { certPem } = generateDtlsCertificate();
    const x509 = new X509Certificate(certPem);
    expect(certificateFingerprint(certPem, 'sha-256').value).toBe(x509.fingerprint256);
    expect(certificateFingerprint(certPem, 'sha-1').value).toBe(x509.fingerprint);
    expect(certificateFingerprint(certPem, 'sha-512').value).toBe(x509.fingerprint512);
  });

  it('checks with the strongest hash offered, against every fingerprint of that hash', () => {
    const a = generateDtlsCertificate().certPem;
    const b = generateDtlsCertificate().certPem;
    const check = fingerprintCheck([
      certificateFingerprint(a, 'sha-256'),
      certificateFingerprint(a, 'sha-384'),
      certificateFingerprint(b, 'sha-384'),
      certificateFingerprint(b, 'sha-1'),
    ]);
    expect(check.digest).toBe('SHA384');
    expect(check.values.map((v) => v.length)).toEqual([48, 48]);
  });
});
