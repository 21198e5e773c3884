import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { processCpuTimes } from '../api/process-cpu.js';
import { perStream } from './stream-step.js';

const SOURCE = fileURLToPath(new URL('./socket-floor.c', import.meta.url));
const NODE_RELAY = fileURLToPath(new URL('./socket-floor-node.ts', import.meta.url));
/** The first seconds are left out: connections settle and the kernel's caches warm. */
const SETTLE_MS = 2000;
const READY_TIMEOUT_MS = 10_000;

/**
 * Who relays: socket-floor.c's relay, or socket-floor-node.ts, the same on Node with the
 * gateway's datagram reader.
 */
export type FloorRelay = 'c' | 'node';

/** The socket work of `streams` streams alone, by one of the relays. */
export interface SocketFloor {
  relay: FloorRelay;
  streams: number;
  seconds: number;
  /** The relay's CPU, % of a core, and the kernel's part of it. */
  cpuPercent: number;
  systemPercent: number;
  cpuPercentPerStream: number | null;
  systemPercentPerStream: number | null;
  /** Datagrams the callers sent, and those that came back through the relay. */
  sent: number;
  received: number;
}

/**
 * Builds the relay with the machine's C compiler; returns its path, or why it cannot be built
 * (the measurement is then skipped, not failed).
 */
export function buildSocketFloor(): { binary: string; dir: string } | { skipped: string } {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-socket-floor-'));
  const binary = join(dir, 'socket-floor');
  const built = spawnSync('cc', ['-O2', '-o', binary, SOURCE], { encoding: 'utf8' });
  if (built.status === 0) return { binary, dir };
  rmSync(dir, { recursive: true, force: true });
  const why = built.error ? built.error.message : built.stderr.trim().split('\n')[0];
  return { skipped: `the socket floor could not be built with cc: ${why}` };
}

/**
 * Runs `streams` streams through a relay for `seconds` (plus a settling start) with the C
 * callers and server of `binary` in a second process, and measures the relay's CPU over the
 * window.
 */
export async function measureSocketFloor(
  binary: string,
  streams: number,
  seconds: number,
  by: FloorRelay = 'c',
): Promise<SocketFloor> {
  const [command, args] =
    by === 'c'
      ? [binary, ['relay', String(streams)]]
      : [process.execPath, ['--import', 'tsx', NODE_RELAY, String(streams)]];
  const relay = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const ports = await readyLine(relay);
    const total = (SETTLE_MS / 1000 + seconds).toFixed(3);
    const peers = spawn(binary, ['peers', total, ...ports], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const done = lastLine(peers);
    await sleep(SETTLE_MS);
    const before = { at: performance.now(), ...processCpuTimes(relay.pid!) };
    await sleep(seconds * 1000);
    const after = { at: performance.now(), ...processCpuTimes(relay.pid!) };
    const counts = /^sent (\d+) received (\d+)$/.exec(await done);
    if (!counts) throw new Error('the socket floor peers ended without their counts');
    const window = (after.at - before.at) / 1000;
    const percent = (cpu: number) => Math.round((cpu / window) * 1000) / 10;
    const cpuPercent = percent(after.user + after.system - before.user - before.system);
    const systemPercent = percent(after.system - before.system);
    return {
      relay: by,
      streams,
      seconds,
      cpuPercent,
      systemPercent,
      cpuPercentPerStream: perStream(cpuPercent, streams),
      systemPercentPerStream: perStream(systemPercent, streams),
      sent: Number(counts[1]),
      received: Number(counts[2]),
    };
  } finally {
    relay.kill();
  }
}

/** The relay's "ready <tcp port> <udp port>..." line: the ports, TCP first. */
async function readyLine(relay: ChildProcess): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(''), READY_TIMEOUT_MS);
  });
  try {
    const line = await Promise.race([lastLine(relay, (l) => l.startsWith('ready ')), timeout]);
    if (!line.startsWith('ready ')) throw new Error('the socket floor relay did not start');
    return line.split(' ').slice(1);
  } finally {
    clearTimeout(timer);
  }
}

/** The first line of a child's output that `wanted` accepts, or its last line when it ends. */
function lastLine(child: ChildProcess, wanted: (line: string) => boolean = () => false) {
  return new Promise<string>((resolve, reject) => {
    let last = '';
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      last = line;
      if (wanted(line)) resolve(line);
    });
    lines.on('close', () => resolve(last));
    child.on('error', reject);
  });
}
