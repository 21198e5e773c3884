import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface TestCertificate {
  /** PEM certificate, self-signed, for `localhost` and `127.0.0.1`. */
  cert: Buffer;
  /** PEM private key of the certificate. */
  key: Buffer;
  /** The files they were written to, as the gateway's configuration would name them. */
  certPath: string;
  keyPath: string;
  /** Deletes the files. */
  remove(): Promise<void>;
}

/**
 * A throwaway self-signed certificate made by the openssl command line tool (a P-256 key,
 * valid `days` days from now, one by default) in a fresh temporary directory.
 */
export async function makeTestCertificate(
  options: { days?: number } = {},
): Promise<TestCertificate> {
  const dir = await mkdtemp(join(tmpdir(), 'voxgate-tls-'));
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  try {
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      String(options.days ?? 1),
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ]);
    const [cert, key] = await Promise.all([readFile(certPath), readFile(keyPath)]);
    return {
      cert,
      key,
      certPath,
      keyPath,
      remove: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
