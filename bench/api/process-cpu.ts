import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/**
 * CPU time (user + system, seconds) a process has used so far, from /proc/<pid>/stat; NaN where
 * there is no /proc. The load generator shares the machine, so server CPU per request is a
 * steadier figure than requests/s when the loader, not the server, is the bottleneck.
 */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces; fields are counted after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
    return (utime + stime) / ticksPerSecond;
  } catch {
    return NaN;
  }
}
