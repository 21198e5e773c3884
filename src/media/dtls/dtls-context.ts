import { addon, type NativeDtlsContext } from '../codec/native-addon.js';
import type { DtlsCertificate } from './dtls-certificate.js';
import { DEFAULT_SRTP_PROFILES, isSrtpProfile, type SrtpProfile } from './srtp-keys.js';

/**
 * ECDHE only (forward secrecy), AEAD first, for ECDSA certificates (the generated one) and RSA
 * ones (a configured one may be): the suites Chrome and Firefox offer in DTLS 1.2.
 */
export const DTLS_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'ECDHE-ECDSA-AES128-SHA',
  'ECDHE-RSA-AES128-SHA',
  'ECDHE-ECDSA-AES256-SHA',
  'ECDHE-RSA-AES256-SHA',
].join(':');

export interface DtlsContextOptions {
  /** SRTP profiles offered (as client) and accepted (as server), most preferred first. */
  srtpProfiles?: readonly SrtpProfile[];
}

/**
 * What every DTLS endpoint of a thread shares: the process's certificate, DTLS 1.2 alone, the
 * ciphers and the SRTP profiles. One per media worker, made from the certificate the main
 * thread generated or loaded.
 */
export class DtlsContext {
  readonly certificate: DtlsCertificate;
  readonly srtpProfiles: readonly SrtpProfile[];
  /** @internal the native SSL_CTX, for DtlsEndpoint. */
  readonly native: NativeDtlsContext;

  constructor(certificate: DtlsCertificate, options: DtlsContextOptions = {}) {
    const profiles = options.srtpProfiles ?? DEFAULT_SRTP_PROFILES;
    const unknown = profiles.filter((p) => !isSrtpProfile(p));
    if (profiles.length === 0 || unknown.length > 0) {
      throw new RangeError(
        `Expected SRTP profiles among SRTP_AEAD_AES_128_GCM, SRTP_AEAD_AES_256_GCM, SRTP_AES128_CM_SHA1_80, SRTP_AES128_CM_SHA1_32 but received ${JSON.stringify(profiles)}`,
      );
    }
    this.certificate = certificate;
    this.srtpProfiles = [...profiles];
    this.native = new addon.DtlsContext(
      certificate.certPem,
      certificate.keyPem,
      DTLS_CIPHERS,
      profiles.join(':'),
    );
  }
}
