import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../../src/config/config.js';
import {
  generateDtlsCertificate,
  loadDtlsCertificate,
} from '../../../../src/media/dtls/dtls-certificate.js';
import { DtlsContext } from '../../../../src/media/dtls/dtls-context.js';
import { readDtlsSettings } from '../../../../src/media/dtls/dtls-settings.js';
import { makeTestCertificate, type TestCertificate } from '../../../support/tls-certificate.js';

let files: TestCertificate;
let other: TestCertificate;
beforeAll(async () => {
  [files, other] = await Promise.all([makeTestCertificate(), makeTestCertificate()]);
});
afterAll(async () => {
  await Promise.all([files.remove(), other.remove()]);
});

describe('the DTLS certificate', () => {
  it('is generated as a self-signed ECDSA P-256 certificate with its SHA-256 SDP fingerprint', () => {
    const certificate = generateDtlsCertificate();
    const x509 = new X509Certificate(certificate.certPem);
    expect(x509.publicKey.asymmetricKeyType).toBe('ec');
    expect(x509.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(x509.subject).toBe('CN=voxgate');
    expect(x509.issuer).toBe('CN=voxgate');
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(certificate.sdpFingerprint).toBe(`sha-256 ${x509.fingerprint256}`);
    expect(generateDtlsCertificate().sdpFingerprint).not.toBe(certificate.sdpFingerprint);
  });

  it('is read from VOXGATE_DTLS_CERT and VOXGATE_DTLS_KEY when they are set', () => {
    const settings = readDtlsSettings({
      VOXGATE_DTLS_CERT: files.certPath,
      VOXGATE_DTLS_KEY: files.keyPath,
    });
    const certificate = loadDtlsCertificate(settings);
    expect(certificate.sdpFingerprint).toBe(
      `sha-256 ${new X509Certificate(files.cert).fingerprint256}`,
    );
    expect(() => new DtlsContext(certificate)).not.toThrow();
    expect(loadDtlsCertificate(readDtlsSettings({})).certPem).toMatch(/BEGIN CERTIFICATE/);
  });

  it('names the variable when a file cannot be used', () => {
    const mismatched = readDtlsSettings({
      VOXGATE_DTLS_CERT: files.certPath,
      VOXGATE_DTLS_KEY: other.keyPath,
    });
    expect(() => loadDtlsCertificate(mismatched)).toThrow(
      `VOXGATE_DTLS_KEY=${JSON.stringify(other.keyPath)} is invalid: must name a PEM file that can be used: the private key is not the key of the certificate`,
    );
    const notPem = `${files.certPath}.txt`;
    writeFileSync(notPem, 'hello');
    expect(() =>
      loadDtlsCertificate(
        readDtlsSettings({ VOXGATE_DTLS_CERT: notPem, VOXGATE_DTLS_KEY: files.keyPath }),
      ),
    ).toThrow(
      /^VOXGATE_DTLS_CERT=".*\.txt" is invalid: must name a PEM file that can be used: not a PEM certificate/,
    );
  });

  it('takes its settings through loadConfig, refusing bad values by name', () => {
    expect(loadConfig({}).dtls).toEqual({
      certificateFiles: null,
      handshakeTimeoutMs: 10_000,
      consentTimeoutMs: 30_000,
    });
    expect(loadConfig({ VOXGATE_DTLS_HANDSHAKE_TIMEOUT: '4' }).dtls.handshakeTimeoutMs).toBe(4000);
    expect(loadConfig({ VOXGATE_ICE_CONSENT_TIMEOUT: '5' }).dtls.consentTimeoutMs).toBe(5000);
    const refusals: [Record<string, string>, string][] = [
      [
        { VOXGATE_DTLS_CERT: files.certPath },
        'VOXGATE_DTLS_KEY="" is invalid: must be set together with the other of VOXGATE_DTLS_CERT and VOXGATE_DTLS_KEY',
      ],
      [
        { VOXGATE_DTLS_CERT: '/nonexistent.pem', VOXGATE_DTLS_KEY: files.keyPath },
        'VOXGATE_DTLS_CERT="/nonexistent.pem" is invalid: must be the path of a readable PEM file',
      ],
      [
        { VOXGATE_DTLS_HANDSHAKE_TIMEOUT: '0' },
        'VOXGATE_DTLS_HANDSHAKE_TIMEOUT="0" is invalid: must be a whole number of seconds from 1 to 300',
      ],
      [
        { VOXGATE_ICE_CONSENT_TIMEOUT: '2.5' },
        'VOXGATE_ICE_CONSENT_TIMEOUT="2.5" is invalid: must be a whole number of seconds from 1 to 300',
      ],
    ];
    for (const [env, message] of refusals) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    }
  });
});
