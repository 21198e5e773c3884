import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** What one `node --import tsx src/doctor/main.ts` printed, and its exit status. */
export interface DoctorRun {
  status: number | null;
  stdout: string;
  stderr: string;
  lines: string[];
  /** The line of the check `name` (`http`, `sip-udp`, `smpp:carrier1`...). */
  line(name: string): string;
}

/** Runs the doctor as its own process with only these VOXGATE_* settings (and PATH). */
export async function runDoctor(env: Record<string, string>): Promise<DoctorRun> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VOXGATE_')),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/doctor/main.ts'], {
    env: { ...clean, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  const status = await new Promise<number | null>((resolve) =>
    child.once('close', (code) => resolve(code)),
  );
  const lines = stdout.split('\n').filter(Boolean);
  return {
    status,
    stdout,
    stderr,
    lines,
    line: (name) => {
      const found = lines.find((l) => l.split(/\s+/)[1] === name);
      if (!found) throw new Error(`no line for ${name} in:\n${stdout}${stderr}`);
      return found;
    },
  };
}

export interface CertificateFiles {
  certPath: string;
  keyPath: string;
  dir: string;
  remove(): Promise<void>;
}

/** A self-signed P-256 certificate for localhost valid `days` days, made by openssl. */
export async function makeCertificate(days: number): Promise<CertificateFiles> {
  const dir = await mkdtemp(join(tmpdir(), 'voxgate-doctor-tls-'));
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    String(days),
    '-subj',
    '/CN=localhost',
    '-keyout',
    keyPath,
    '-out',
    certPath,
  ]);
  return { certPath, keyPath, dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
