import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

let ticksPerSecond: number | undefined;

/** The ids of this process's OS threads, from /proc/self/task (empty where there is no /proc). */
export function threadIds(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number);
  } catch {
    return [];
  }
}

/**
 * CPU time (user + system, seconds) one thread of this process has used, from
 * /proc/self/task/<tid>/stat, in clock ticks (10 ms on most Linux builds); NaN when the thread
 * is gone or there is no /proc. A worker thread's own CPU, which process.cpuUsage() cannot
 * separate from the main thread's.
 */
export function threadCpuSeconds(tid: number): number {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces; fields are counted after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return NaN;
  }
}

/** Total CPU seconds of a set of threads. */
export function threadsCpuSeconds(tids: readonly number[]): number {
  return tids.reduce((sum, tid) => sum + (threadCpuSeconds(tid) || 0), 0);
}

/** Datagrams the kernel dropped for want of receive buffer, machine-wide (UDP RcvbufErrors). */
export function udpReceiveBufferErrors(): number {
  try {
    const lines = readFileSync('/proc/net/snmp', 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('Udp:'));
    const names = lines[0]!.split(/\s+/);
    const values = lines[1]!.split(/\s+/);
    return Number(values[names.indexOf('RcvbufErrors')]);
  } catch {
    return NaN;
  }
}

/** Times a thread of this process was switched out while it could still run (preempted). */
export function threadPreemptions(tid: number): number {
  try {
    const status = readFileSync(`/proc/self/task/${tid}/status`, 'utf8');
    return Number(/^nonvoluntary_ctxt_switches:\s*(\d+)/m.exec(status)?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}
