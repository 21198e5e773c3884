import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * libsrtp2 (Debian's libsrtp2-dev, installed by scripts/setup --test) as an SRTP peer nobody
 * here wrote: test/support/libsrtp-peer.c, built once per source version with cc, runs one
 * libsrtp session over a batch of packets. AES-CM only: Debian builds libsrtp2 without
 * OpenSSL, so without GCM.
 */
const SOURCE = fileURLToPath(new URL('./libsrtp-peer.c', import.meta.url));

export type LibsrtpOperation = 'protect' | 'unprotect';
export type LibsrtpTag = 80 | 32;

/** What libsrtp made of each packet: the bytes out, or its error status. */
export type LibsrtpResult = Buffer | { status: number };

function build(): string {
  const source = readFileSync(SOURCE);
  const digest = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), 'voxgate-libsrtp-peer');
  const binary = join(dir, `libsrtp-peer-${digest}`);
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  const built = spawnSync('cc', ['-O2', '-Wall', '-o', binary, SOURCE, '-lsrtp2'], {
    encoding: 'utf8',
  });
  if (built.status !== 0) {
    throw new Error(
      `libsrtp-peer.c did not build (scripts/setup --test installs libsrtp2-dev): ${built.stderr}`,
    );
  }
  return binary;
}

/** Runs one libsrtp session over `packets`, in order. */
export function libsrtp(
  operation: LibsrtpOperation,
  kind: 'rtp' | 'rtcp',
  tag: LibsrtpTag,
  keyAndSalt: Uint8Array,
  packets: readonly Uint8Array[],
): LibsrtpResult[] {
  const run = spawnSync(
    build(),
    [operation, kind, String(tag), Buffer.from(keyAndSalt).toString('hex')],
    {
      input: packets.map((p) => Buffer.from(p).toString('hex')).join('\n') + '\n',
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  if (run.status !== 0) throw new Error(`libsrtp-peer exited ${run.status}: ${run.stderr}`);
  const lines = run.stdout.trimEnd().split('\n');
  if (lines.length !== packets.length) {
    throw new Error(`libsrtp-peer answered ${lines.length} lines for ${packets.length} packets`);
  }
  return lines.map((line) =>
    line.startsWith('ERR ') ? { status: Number(line.slice(4)) } : Buffer.from(line, 'hex'),
  );
}
