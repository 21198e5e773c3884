import { readdirSync, readFileSync } from 'node:fs';
import { addon } from './media/codec/native-addon.js';

/** What happened to VOXGATE_REALTIME_PRIORITY at start, for the start-up log. */
export type PriorityOutcome =
  | { applied: true; priority: number; threads: number }
  | { applied: false; priority: number; reason: string };

const TASKS = '/proc/self/task';
const ESRCH = 3;

/**
 * Puts every thread of this process under round-robin real-time scheduling (SCHED_RR) at
 * `priority`: the main thread, which carries SIP and the API, and the threads V8 and libuv have
 * already started. Threads started later (the media workers, libuv's pool) inherit it. A thread
 * at real-time priority runs as soon as it is ready, ahead of every normal process, so the
 * gateway's calls no longer wait behind other work on a busy machine; the kernel still keeps 5 %
 * of each second for normal processes (sched_rt_runtime_us).
 *
 * Never throws: a system that refuses (no CAP_SYS_NICE and no RLIMIT_RTPRIO that allows the
 * priority, or not Linux) leaves the process as it was and says why.
 */
export function applyRealtimePriority(priority: number): PriorityOutcome {
  let tids: number[];
  try {
    tids = readdirSync(TASKS).map(Number);
  } catch {
    return { applied: false, priority, reason: 'real-time scheduling needs Linux' };
  }
  // The main thread (tid = pid) first: when it is refused, nothing has changed.
  tids.sort((a, b) => (a === process.pid ? -1 : b === process.pid ? 1 : a - b));
  let changed = 0;
  for (const tid of tids) {
    try {
      addon.setRoundRobin(tid, priority);
      changed++;
    } catch (error) {
      if ((error as { errno?: number }).errno === ESRCH) continue; // it ended meanwhile
      const reason =
        cgroupRealtimeBudget() === 0
          ? "this process's control group allows no real-time time (cpu.rt_runtime_us is 0): in a container, give it a budget (docker run --cpu-rt-runtime, with the daemon's --cpu-rt-runtime)"
          : `it needs CAP_SYS_NICE or an RLIMIT_RTPRIO of at least ${priority}`;
      return { applied: false, priority, reason: `${(error as Error).message}; ${reason}` };
    }
  }
  return { applied: true, priority, threads: changed };
}

/**
 * The real-time time per period (µs) the cgroup v1 cpu controller gives this process's group,
 * or null when there is no such controller (cgroup v2, not Linux). A child group starts with
 * 0, which refuses SCHED_RR even to root: the usual case in a container on a cgroup v1 host.
 */
function cgroupRealtimeBudget(): number | null {
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((l) => l.split(':')[1]?.split(',').includes('cpu'));
    if (!line) return null;
    const path = line.split(':').slice(2).join(':');
    for (const mount of ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct']) {
      // Inside a container the group is often mounted as the root of its own hierarchy.
      for (const dir of [`${mount}${path}`, mount]) {
        try {
          return Number(readFileSync(`${dir}/cpu.rt_runtime_us`, 'utf8'));
        } catch {
          // not there: the next place
        }
      }
    }
  } catch {
    // no /proc/self/cgroup
  }
  return null;
}
