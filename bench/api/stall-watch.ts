import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';

/** Times the machine stood still over a stretch of the run, ms. */
export interface Stalls {
  /** Wake-ups more than STALL_MS late. */
  count: number;
  totalMs: number;
  longestMs: number;
}

export interface StallWatch {
  pid: number;
  /**
   * True when the watch runs at real-time priority: then nothing on the machine can hold it
   * off, and a late wake-up is time the (virtual) machine itself did not run. False: it also
   * counts waits for a busy core.
   */
  realtime: boolean;
  /** The stalls since the last call. */
  take(): Stalls;
  stop(): Promise<void>;
}

/** A wake-up this much later than asked counts as a stall. */
const STALL_MS = 4;
/**
 * SCHED_FIFO priority of the watch: above any a benchmark gives the gateway
 * (VOXGATE_REALTIME_PRIORITY), or a busy real-time gateway would hold the watch off and its
 * waits would count as stalls.
 */
export const STALL_WATCH_PRIORITY = 50;

/**
 * Asks to wake every millisecond and prints, on its own line, how late each wake-up was when it
 * was more than STALL_MS late. Ending its stdin ends it.
 */
const WATCH_SCRIPT = `
const { performance } = require('node:perf_hooks');
let last = performance.now();
const tick = () => {
  const now = performance.now();
  const late = now - last - 1;
  if (late > ${STALL_MS}) process.stdout.write(late.toFixed(1) + '\\n');
  last = now;
  setTimeout(tick, 1);
};
setTimeout(tick, 1);
process.stdin.on('data', () => {});
process.stdin.on('end', () => process.exit(0));
`;

/** chrt can give a child real-time priority here (Linux, with the right to). */
function realtimeAllowed(): boolean {
  const probe = spawnSync('chrt', ['-f', String(STALL_WATCH_PRIORITY), 'true'], {
    stdio: 'ignore',
  });
  return probe.status === 0;
}

/**
 * A process of its own that notices when the whole machine stops: on a shared virtual machine
 * the hypervisor can hold every virtual CPU for tens of milliseconds, and whatever was being
 * measured then looks that much slower, with no sign of it in the guest's CPU figures.
 */
export function startStallWatch(): StallWatch {
  const realtime = realtimeAllowed();
  const child = realtime
    ? spawn('chrt', ['-f', String(STALL_WATCH_PRIORITY), process.execPath, '-e', WATCH_SCRIPT], {
        stdio: ['pipe', 'pipe', 'inherit'],
      })
    : spawn(process.execPath, ['-e', WATCH_SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
  let late: number[] = [];
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line !== '') late.push(Number(line));
  });
  return {
    pid: child.pid ?? 0,
    realtime,
    take: () => {
      const taken = late;
      late = [];
      return {
        count: taken.length,
        totalMs: Math.round(taken.reduce((sum, ms) => sum + ms, 0)),
        longestMs: taken.length === 0 ? 0 : Math.max(...taken),
      };
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.stdin.end();
      await exited;
    },
  };
}

/** How the watch ran, for a run's settings. */
export function describeStallWatch(watch: StallWatch): string {
  return watch.realtime
    ? 'a 1 ms timer at real-time priority: a stall is time the whole machine did not run'
    : 'a 1 ms timer at normal priority (no real-time priority here): a stall may also be a wait for a busy core';
}
