/**
 * What does a DTLS-SRTP handshake cost in CPU, per call leg?
 *
 *   npm run bench:media-dtls [-- --rounds 7 --handshakes 100]
 *
 * Both sides run in this process, joined in memory (no sockets): a client and a server
 * endpoint each with a certificate of its own, from new endpoints to both holding SRTP keys.
 * Times, per handshake: the CPU of both sides together (process.cpuUsage), and each side's
 * share (the time inside its own calls); the server with the generated ECDSA P-256 certificate,
 * and with an RSA 2048 one as a configured certificate may be. Also the generation of the
 * process's certificate. Prints a table and writes bench/results/media-dtls-*.json.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { describeMachine, describeRunContext, type RunContext } from '../api/machine.js';
import { describeRevision } from '../api/revision.js';
import {
  dtlsCertificateFromPem,
  generateDtlsCertificate,
  type DtlsCertificate,
} from '../../src/media/dtls/dtls-certificate.js';
import { DtlsContext } from '../../src/media/dtls/dtls-context.js';
import { DtlsEndpoint } from '../../src/media/dtls/dtls-endpoint.js';
import type { DtlsRole, SrtpKeys } from '../../src/media/dtls/srtp-keys.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

interface HandshakeCase {
  name: string;
  /** Median over rounds, per handshake (both sides). */
  cpuMs: number;
  cpuMsRounds: number[];
  clientMs: number;
  serverMs: number;
  datagrams: number;
  profile: string;
}

function plan(): { rounds: number; handshakes: number } {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '7' },
      handshakes: { type: 'string', default: '100' },
    },
  });
  const result = { rounds: Number(values.rounds), handshakes: Number(values.handshakes) };
  for (const [name, value] of Object.entries(result)) {
    if (!Number.isInteger(value) || value < 1) {
      throw new Error(`Expected a positive integer for ${name} but received ${value}`);
    }
  }
  return result;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const round3 = (n: number) => Math.round(n * 1000) / 1000;
const cpuMsSince = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

/** One handshake, run to the end synchronously; the time spent in each side's calls. */
function handshake(
  client: { context: DtlsContext; certificate: DtlsCertificate },
  server: { context: DtlsContext; certificate: DtlsCertificate },
  spent: Record<DtlsRole, number>,
): { keys: SrtpKeys; datagrams: number } {
  const queue: { to: DtlsRole; datagram: Buffer }[] = [];
  const connected: SrtpKeys[] = [];
  const make = (role: DtlsRole, self: typeof client, peer: typeof client) =>
    new DtlsEndpoint({
      context: self.context,
      role,
      remoteFingerprints: [peer.certificate.sdpFingerprint],
      listener: {
        send: (datagram) => queue.push({ to: role === 'client' ? 'server' : 'client', datagram }),
        onConnected: (keys) => connected.push(keys),
        onFailed: (failure) => {
          throw new Error(`handshake failed: ${failure.reason}`);
        },
      },
    });
  const endpoints = {
    client: make('client', client, server),
    server: make('server', server, client),
  };
  const timed = (role: DtlsRole, work: () => void) => {
    const start = process.hrtime.bigint();
    work();
    spent[role] += Number(process.hrtime.bigint() - start) / 1e6;
  };
  timed('server', () => endpoints.server.start());
  timed('client', () => endpoints.client.start());
  let datagrams = 0;
  for (let next = queue.shift(); next; next = queue.shift()) {
    datagrams++;
    const { to, datagram } = next;
    timed(to, () => endpoints[to].feed(datagram));
  }
  if (connected.length !== 2)
    throw new Error(`handshake ended with ${connected.length} sides connected`);
  timed('client', () => endpoints.client.close());
  timed('server', () => endpoints.server.close());
  return { keys: connected[0]!, datagrams };
}

function rsaCertificate(): DtlsCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-bench-dtls-'));
  try {
    const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=rsa',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    return dtlsCertificateFromPem(readFileSync(cert, 'utf8'), readFileSync(key, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function measureCase(
  name: string,
  serverCertificate: DtlsCertificate,
  settings: { rounds: number; handshakes: number },
): HandshakeCase {
  const clientCertificate = generateDtlsCertificate();
  const client = { certificate: clientCertificate, context: new DtlsContext(clientCertificate) };
  const server = { certificate: serverCertificate, context: new DtlsContext(serverCertificate) };
  const warm = { client: 0, server: 0 };
  for (let i = 0; i < 20; i++) handshake(client, server, warm);
  const rounds: number[] = [];
  const spent = { client: 0, server: 0 };
  let last = handshake(client, server, warm);
  for (let r = 0; r < settings.rounds; r++) {
    const start = process.cpuUsage();
    for (let i = 0; i < settings.handshakes; i++) last = handshake(client, server, spent);
    rounds.push(cpuMsSince(start) / settings.handshakes);
  }
  const total = settings.rounds * settings.handshakes;
  return {
    name,
    cpuMs: round3(median(rounds)),
    cpuMsRounds: rounds.map(round3),
    clientMs: round3(spent.client / total),
    serverMs: round3(spent.server / total),
    datagrams: last.datagrams,
    profile: last.keys.profile,
  };
}

function measureGeneration(count: number): number {
  generateDtlsCertificate();
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) generateDtlsCertificate();
  return round3(cpuMsSince(start) / count);
}

function main(): void {
  const settings = plan();
  const machine = describeMachine();
  const cases = [
    measureCase('ECDSA P-256 both sides (generated)', generateDtlsCertificate(), settings),
    measureCase('server RSA 2048 (configured), client ECDSA P-256', rsaCertificate(), settings),
  ];
  const generationMs = measureGeneration(50);
  const context: RunContext = {
    machine,
    revision: describeRevision(ROOT),
    loadAverageAfter: loadavg().map((n) => Math.round(n * 100) / 100),
  };
  for (const line of describeRunContext(context)) console.log(line);
  console.log(
    `\nDTLS 1.2 handshake with use_srtp, both sides in process, ${settings.rounds} rounds of ${settings.handshakes}`,
  );
  console.log(
    'case                                               | CPU ms/handshake | client ms | server ms | datagrams | profile',
  );
  for (const c of cases) {
    console.log(
      `${c.name.padEnd(50)} | ${c.cpuMs.toFixed(3).padStart(16)} | ${c.clientMs.toFixed(3).padStart(9)} | ${c.serverMs.toFixed(3).padStart(9)} | ${String(c.datagrams).padStart(9)} | ${c.profile}`,
    );
  }
  console.log(`\ncertificate generation (ECDSA P-256, self-signed): ${generationMs} ms CPU`);
  const run = { ...context, settings, cases, certificateGenerationMs: generationMs };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = new Date()
    .toISOString()
    .replace(/[:.]/g, '-')
    .replace(/-\d+Z$/, 'Z');
  const json = `${JSON.stringify(run, null, 2)}\n`;
  for (const file of [`media-dtls-${stamp}.json`, 'media-dtls-latest.json']) {
    writeFileSync(join(RESULTS_DIR, file), json);
    console.log(`wrote bench/results/${file}`);
  }
}

main();
