import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/**
 * CPU time (user + system, seconds) a process has used so far, from /proc/<pid>/stat; NaN where
 * there is no /proc. The load generator shares the machine, so server CPU per request is a
 * steadier figure than requests/s when the loader, not the server, is the bottleneck.
 */
export function processCpuSeconds(pid: number): number {
  const { user, system } = processCpuTimes(pid);
  return user + system;
}

/**
 * A process's CPU seconds so far in user space and in the kernel on its behalf (system calls,
 * and on loopback the delivery of what it sends into the receivers' sockets), from
 * /proc/<pid>/stat; NaN where there is no /proc.
 */
export function processCpuTimes(pid: number): { user: number; system: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces; fields are counted after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
    return {
      user: Number(fields[11]) / ticksPerSecond,
      system: Number(fields[12]) / ticksPerSecond,
    };
  } catch {
    return { user: NaN, system: NaN };
  }
}

/**
 * CPU seconds, all cores together, from the first line of /proc/stat: `busy` on any work (user,
 * nice, system, irq, softirq) and `stolen`, the time a hypervisor ran something else while this
 * machine's virtual CPUs had work. NaN where there is no /proc.
 */
export function machineCpuSeconds(): { busy: number; stolen: number } {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
    // cpu user nice system idle iowait irq softirq steal
    const tick = (i: number) => Number(fields[i] ?? 0);
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
    return {
      busy: (tick(1) + tick(2) + tick(3) + tick(6) + tick(7)) / ticksPerSecond,
      stolen: tick(8) / ticksPerSecond,
    };
  } catch {
    return { busy: NaN, stolen: NaN };
  }
}

/**
 * Seconds a thread has spent ready to run but waiting for a core, from its schedstat (the
 * scheduler's run_delay, in ns). NaN when the thread is gone or the kernel does not keep it.
 */
export function threadWaitSeconds(pid: number, tid: number = pid): number {
  try {
    const fields = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ');
    return Number(fields[1]) / 1e9;
  } catch {
    return NaN;
  }
}

/**
 * How many times a thread has gone to sleep of its own accord (waiting for I/O, a timer, a
 * message), from its voluntary_ctxt_switches: each is a wake-up later. NaN when the thread is
 * gone.
 */
export function threadSleeps(pid: number, tid: number = pid): number {
  try {
    const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}
