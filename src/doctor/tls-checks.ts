import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fail, ok, reason, type CheckResult } from './check-result.js';

/** A certificate this close to its end fails: renewals need time to reach the machine. */
export const CERTIFICATE_MARGIN_DAYS = 14;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The PEM files of VOXGATE_SIP_TLS_CERT and VOXGATE_SIP_TLS_KEY: `tls-cert` (readable, a
 * certificate, valid now and for CERTIFICATE_MARGIN_DAYS more) and `tls-key` (readable, a
 * private key, the certificate's).
 */
export async function checkTlsFiles(
  files: { certFile: string; keyFile: string },
  now: Date = new Date(),
): Promise<CheckResult[]> {
  let certificate: X509Certificate | null = null;
  let certResult: CheckResult;
  try {
    certificate = new X509Certificate(await readFile(files.certFile));
    certResult = judgeValidity(certificate, files.certFile, now);
  } catch (error) {
    certResult = fail(
      'tls-cert',
      `VOXGATE_SIP_TLS_CERT ${files.certFile} is not a readable PEM certificate (${reason(error)})`,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(await readFile(files.keyFile));
  } catch (error) {
    return [
      certResult,
      fail(
        'tls-key',
        `VOXGATE_SIP_TLS_KEY ${files.keyFile} is not a readable, unencrypted PEM private key ` +
          `(${reason(error)})`,
      ),
    ];
  }
  if (!certificate)
    return [
      certResult,
      ok('tls-key', `${files.keyFile} is a private key (no certificate to match)`),
    ];
  const matches = certificate.checkPrivateKey(key);
  return [
    certResult,
    matches
      ? ok('tls-key', `${files.keyFile} is the private key of the certificate`)
      : fail(
          'tls-key',
          `VOXGATE_SIP_TLS_KEY ${files.keyFile} is not the key of the certificate in ` +
            `VOXGATE_SIP_TLS_CERT ${files.certFile}: set the two files of one certificate`,
        ),
  ];
}

function judgeValidity(certificate: X509Certificate, file: string, now: Date): CheckResult {
  const from = new Date(certificate.validFrom);
  const to = new Date(certificate.validTo);
  const subject = certificate.subject.replace(/\n/g, ', ');
  const until = to.toISOString();
  const days = Math.floor((to.getTime() - now.getTime()) / DAY_MS);
  const renew = 'renew it and point VOXGATE_SIP_TLS_CERT and VOXGATE_SIP_TLS_KEY at the new files';
  if (now < from)
    return fail('tls-cert', `${file} (${subject}) is not valid before ${from.toISOString()}`);
  if (now >= to) return fail('tls-cert', `${file} (${subject}) expired on ${until}: ${renew}`);
  if (to.getTime() - now.getTime() < CERTIFICATE_MARGIN_DAYS * DAY_MS)
    return fail(
      'tls-cert',
      `${file} (${subject}) expires on ${until}, in ${days} days (under ` +
        `${CERTIFICATE_MARGIN_DAYS}): ${renew}`,
    );
  return ok('tls-cert', `${file} (${subject}) is valid until ${until} (${days} days)`);
}
