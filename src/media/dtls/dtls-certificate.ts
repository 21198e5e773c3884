import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { addon } from '../codec/native-addon.js';
import {
  certificateFingerprint,
  formatDtlsFingerprint,
  type DtlsFingerprint,
} from './dtls-fingerprint.js';
import { SettingError } from '../../core/setting-error.js';
import type { DtlsSettings } from './dtls-settings.js';

/**
 * The certificate voxgate presents in every DTLS handshake of the process, with its key and its
 * SHA-256 fingerprint. A plain object, so that it can be posted to the media workers, which
 * each make a DtlsContext from it.
 */
export interface DtlsCertificate {
  certPem: string;
  keyPem: string;
  fingerprint: DtlsFingerprint;
  /** The `a=fingerprint` value: `sha-256 AB:CD:...`. */
  sdpFingerprint: string;
}

/**
 * Validity of a generated certificate. Peers check the fingerprint, not the dates, but some
 * refuse an expired certificate, and a gateway runs for months between restarts.
 */
export const GENERATED_CERTIFICATE_DAYS = 365;

/** A new self-signed ECDSA P-256 certificate (about 4 ms of CPU). */
export function generateDtlsCertificate(commonName = 'voxgate'): DtlsCertificate {
  const { cert, key } = addon.generateDtlsCertificate(commonName, GENERATED_CERTIFICATE_DAYS);
  return describeCertificate(cert, key);
}

/** A certificate and key given as PEM; throws naming what is wrong with them. */
export function dtlsCertificateFromPem(certPem: string, keyPem: string): DtlsCertificate {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(certPem);
  } catch (error) {
    throw new Error(`not a PEM certificate (${(error as Error).message})`);
  }
  let key;
  try {
    key = createPrivateKey(keyPem);
  } catch (error) {
    throw new Error(`not a PEM private key (${(error as Error).message})`);
  }
  if (!certificate.checkPrivateKey(key)) {
    throw new Error('the private key is not the key of the certificate');
  }
  return describeCertificate(certPem, keyPem);
}

/**
 * The process's certificate as the settings say: read from their PEM files, or generated.
 * A file that cannot be used throws a SettingError naming its variable.
 */
export function loadDtlsCertificate(settings: DtlsSettings): DtlsCertificate {
  const files = settings.certificateFiles;
  if (files === null) return generateDtlsCertificate();
  const certPem = readPem('VOXGATE_DTLS_CERT', files.certFile);
  const keyPem = readPem('VOXGATE_DTLS_KEY', files.keyFile);
  try {
    return dtlsCertificateFromPem(certPem, keyPem);
  } catch (error) {
    const keyProblem = /private key/.test((error as Error).message);
    throw new SettingError(
      keyProblem ? 'VOXGATE_DTLS_KEY' : 'VOXGATE_DTLS_CERT',
      `must name a PEM file that can be used: ${(error as Error).message}`,
      keyProblem ? files.keyFile : files.certFile,
    );
  }
}

function readPem(variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new SettingError(
      variable,
      `must be the path of a readable PEM file (${(error as Error).message})`,
      path,
    );
  }
}

function describeCertificate(certPem: string, keyPem: string): DtlsCertificate {
  const fingerprint = certificateFingerprint(certPem, 'sha-256');
  return { certPem, keyPem, fingerprint, sdpFingerprint: formatDtlsFingerprint(fingerprint) };
}
