/**
 * What does SRTP cost a media worker per packet?
 *
 *   npm run bench:srtp [-- --rounds 7 --round-ms 300 --warmup-ms 300]
 *
 * Times protect then unprotect of one RTP packet, a 20 ms PCMU packet (172 bytes) and an
 * Opus-sized one (100 bytes), for each suite: through SrtpContext in place (the hot path:
 * the packet in a buffer with room for the tag, unprotected where it lies), through its copying
 * form (protectRtp makes a new Buffer), and through the addon directly (what the wrapper's
 * checks cost); against a plain copy of the packet, and against Debian's libsrtp2 in C with no
 * JavaScript boundary (bench/media/libsrtp-floor.c, AES-CM only). The goal: protect +
 * unprotect in at most 2 µs of worker CPU. Prints a table and writes
 * bench/results/media-srtp-*.json with the machine.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine, describeRunContext, type RunContext } from '../api/machine.js';
import { describeRevision } from '../api/revision.js';
import { addon } from '../../src/media/codec/native-addon.js';
import { SrtpContext } from '../../src/media/srtp/srtp-context.js';
import {
  SRTP_SUITE_PARAMETERS,
  SRTP_SUITES,
  type SrtpSuite,
} from '../../src/media/srtp/srtp-suite.js';
import {
  median,
  timeCases,
  timingPlanFromArgs,
  type TimedCase,
  type TimingPlan,
} from './frame-timing.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const FLOOR_SOURCE = fileURLToPath(new URL('./libsrtp-floor.c', import.meta.url));
const GOAL_US = 2;
const PACKETS = [
  { name: 'PCMU 20 ms', bytes: 172 },
  { name: 'Opus', bytes: 100 },
] as const;
const WAYS = ['copy', 'in place', 'copying', 'addon direct'] as const;
type Way = (typeof WAYS)[number];

interface SrtpCaseResult {
  suite: SrtpSuite | 'none';
  packet: string;
  bytes: number;
  way: Way | 'libsrtp2 (C)';
  /** Median over rounds of protect + unprotect, microseconds per packet. */
  usPerPacket: number;
  roundsUsPerPacket: number[];
}

const timingPlan = (): TimingPlan => timingPlanFromArgs({ roundMs: 300, warmupMs: 300 });

function template(bytes: number): Buffer {
  const packet = Buffer.alloc(bytes, 0x55);
  packet.writeUInt32BE(0x80000000, 0); // V=2, PT 0, sequence set per packet
  packet.writeUInt32BE(0x1234abcd, 8);
  return packet;
}

/** One way of protecting then unprotecting a packet of `bytes`, each call the next sequence. */
function work(suite: SrtpSuite, bytes: number, way: Way): () => number {
  const parameters = SRTP_SUITE_PARAMETERS[suite];
  const keying = {
    suite,
    masterKey: Buffer.alloc(parameters.masterKeyLength, 1),
    masterSalt: Buffer.alloc(parameters.masterSaltLength, 2),
  };
  const sender = new SrtpContext({ ...keying, direction: 'outbound' });
  const receiver = new SrtpContext({ ...keying, direction: 'inbound' });
  const source = template(bytes);
  const buffer = Buffer.alloc(bytes + parameters.rtpOverhead);
  let seq = 0;
  switch (way) {
    case 'copy':
      return () => {
        source.writeUInt16BE(seq++ & 0xffff, 2);
        source.copy(buffer);
        return buffer[bytes - 1]!;
      };
    case 'in place':
      return () => {
        source.writeUInt16BE(seq++ & 0xffff, 2);
        source.copy(buffer);
        const length = sender.protectRtpInPlace(buffer, bytes);
        const plain = receiver.unprotectRtp(buffer.subarray(0, length));
        return typeof plain === 'string' ? fail(plain) : plain.length;
      };
    case 'copying':
      return () => {
        source.writeUInt16BE(seq++ & 0xffff, 2);
        const plain = receiver.unprotectRtp(sender.protectRtp(source));
        return typeof plain === 'string' ? fail(plain) : plain.length;
      };
    case 'addon direct': {
      const code = parameters.code;
      const nativeSender = new addon.SrtpContext(code, keying.masterKey, keying.masterSalt, true);
      const nativeReceiver = new addon.SrtpContext(code, keying.masterKey, keying.masterSalt, true);
      return () => {
        source.writeUInt16BE(seq++ & 0xffff, 2);
        source.copy(buffer);
        const length = nativeSender.protectRtp(buffer, bytes);
        const plain = nativeReceiver.unprotectRtp(buffer.subarray(0, length));
        return plain < 0 ? fail(String(plain)) : plain;
      };
    }
  }
}

function fail(reason: string): never {
  throw new Error(`bench:srtp: a packet was refused (${reason})`);
}

/** libsrtp2's own cost in C, or why there is none (no cc, no libsrtp2-dev). */
function libsrtpFloor(tag: 80 | 32, bytes: number): number | string {
  const binary = join(tmpdir(), 'voxgate-libsrtp-floor');
  const built = spawnSync('cc', ['-O2', '-o', binary, FLOOR_SOURCE, '-lsrtp2'], {
    encoding: 'utf8',
  });
  if (built.status !== 0) return `not built: ${built.stderr.trim() || built.error?.message}`;
  const runs = [0, 1, 2].map(() => {
    const run = spawnSync(binary, [String(tag), String(bytes), '300000'], { encoding: 'utf8' });
    return Number(run.stdout.trim()) / 1e3;
  });
  return median(runs);
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

function main(): void {
  const plan = timingPlan();
  const machine = describeMachine();
  const cases: (TimedCase & {
    suite: SrtpSuite | 'none';
    packet: string;
    bytes: number;
    way: Way;
  })[] = [];
  for (const packet of PACKETS) {
    cases.push({
      id: `copy ${packet.bytes}`,
      suite: 'none',
      packet: packet.name,
      bytes: packet.bytes,
      way: 'copy',
      work: work('AES_CM_128_HMAC_SHA1_80', packet.bytes, 'copy'),
    });
    for (const suite of SRTP_SUITES) {
      for (const way of WAYS.filter((w) => w !== 'copy')) {
        cases.push({
          id: `${suite} ${packet.bytes} ${way}`,
          suite,
          packet: packet.name,
          bytes: packet.bytes,
          way,
          work: work(suite, packet.bytes, way),
        });
      }
    }
  }
  const timings = timeCases(cases, plan);
  const results: SrtpCaseResult[] = cases.map((c) => {
    const rounds = timings.get(c.id)!.roundsUsPerFrame;
    return {
      suite: c.suite,
      packet: c.packet,
      bytes: c.bytes,
      way: c.way,
      usPerPacket: round3(median(rounds)),
      roundsUsPerPacket: rounds.map(round3),
    };
  });
  const floors: Record<string, number | string> = {};
  for (const packet of PACKETS) {
    for (const tag of [80, 32] as const) {
      const floor = libsrtpFloor(tag, packet.bytes);
      floors[`AES_CM_128_HMAC_SHA1_${tag} ${packet.bytes}`] =
        typeof floor === 'number' ? round3(floor) : floor;
    }
  }
  const context: RunContext = {
    machine,
    revision: describeRevision(ROOT),
    loadAverageAfter: describeMachine().loadAverage,
  };
  const worst = Math.max(...results.filter((r) => r.way === 'in place').map((r) => r.usPerPacket));
  const run = {
    benchmark: 'media-srtp',
    date: new Date().toISOString(),
    ...context,
    plan,
    openssl: process.versions.openssl,
    results,
    libsrtp2FloorUs: floors,
    goal: { usPerPacket: GOAL_US, worstInPlaceUs: worst, met: worst <= GOAL_US },
  };
  report(run, context, results, floors);
}

function report(
  run: { date: string; goal: { worstInPlaceUs: number; met: boolean } },
  context: RunContext,
  results: SrtpCaseResult[],
  floors: Record<string, number | string>,
): void {
  const lines = [...describeRunContext(context), `OpenSSL ${process.versions.openssl}`, ''];
  lines.push('protect + unprotect, µs per packet (median of rounds)');
  const header = ['suite', 'packet', ...WAYS, 'libsrtp2 (C)'];
  const rows: string[][] = [];
  for (const packet of PACKETS) {
    for (const suite of SRTP_SUITES) {
      const at = (way: Way) =>
        results.find(
          (r) => r.bytes === packet.bytes && r.way === way && (way === 'copy' || r.suite === suite),
        )!.usPerPacket;
      const floor = floors[`${suite} ${packet.bytes}`];
      rows.push([
        suite,
        `${packet.name} (${packet.bytes} B)`,
        ...WAYS.map((way) => at(way).toFixed(3)),
        floor === undefined ? 'no GCM' : typeof floor === 'number' ? floor.toFixed(3) : 'n/a',
      ]);
    }
  }
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  for (const row of [header, ...rows]) {
    lines.push(
      row
        .map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
        .join('  '),
    );
  }
  lines.push(
    '',
    `goal: protect + unprotect <= ${GOAL_US} µs in place; worst ${run.goal.worstInPlaceUs.toFixed(3)} µs: ${run.goal.met ? 'met' : 'NOT met'}`,
  );
  console.log(lines.join('\n'));
  mkdirSync(RESULTS_DIR, { recursive: true });
  const json = JSON.stringify(run, null, 2) + '\n';
  const stamp = run.date.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
  for (const name of [`media-srtp-${stamp}.json`, 'media-srtp-latest.json']) {
    writeFileSync(join(RESULTS_DIR, name), json);
  }
}

main();
