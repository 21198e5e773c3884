import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { readSample } from '../api/prometheus-sample.js';
import { processCpuTimes, threadSleeps, threadWaitSeconds } from '../api/process-cpu.js';

/** The gateway's CPU time so far, read at one moment. */
export interface GatewayCpuReading {
  /** performance.now() the reading stands for. */
  at: number;
  /** User and system CPU seconds of the whole process; NaN when unknown. */
  seconds: number;
  /** The system part of `seconds`: the kernel's work on the process's behalf; NaN when unknown. */
  systemSeconds: number;
  /** CPU seconds of its main thread and of its other threads together; empty when unknown. */
  threads: Map<string, number>;
  /** Seconds its main thread stood ready to run without a core; NaN when unknown. */
  mainWaitSeconds: number;
  /** Times its main thread went to sleep (and was woken again); NaN when unknown. */
  mainSleeps: number;
}

/**
 * Where the gateway's CPU and memory figures come from: /proc when the bench started it on this
 * machine, its Prometheus /metrics when it runs elsewhere, or nowhere.
 */
export interface GatewayUsage {
  from: 'proc' | 'metrics' | 'unavailable';
  cpu(): Promise<GatewayCpuReading>;
  /** Resident memory, MiB; NaN when unknown. */
  residentMiB(): Promise<number>;
}

/** prom-client's default metrics, under the gateway's prefix. */
export const CPU_METRIC = 'voxgate_process_cpu_seconds_total';
export const SYSTEM_CPU_METRIC = 'voxgate_process_cpu_system_seconds_total';
export const RESIDENT_METRIC = 'voxgate_process_resident_memory_bytes';

/** The gateway process `pid` on this machine, read from /proc. */
export function procUsage(pid: number): GatewayUsage {
  return {
    from: 'proc',
    cpu: () => {
      const { user, system } = processCpuTimes(pid);
      return Promise.resolve({
        at: performance.now(),
        seconds: user + system,
        systemSeconds: system,
        threads: threadSeconds(pid),
        mainWaitSeconds: threadWaitSeconds(pid),
        mainSleeps: threadSleeps(pid),
      });
    },
    residentMiB: () => Promise.resolve(residentMiB(pid)),
  };
}

/**
 * A gateway elsewhere, from GET /metrics: its process CPU counters (every thread together, as
 * process.cpuUsage() counts it when the gateway answers, and the system part of it) and its
 * resident memory. No thread breakdown and no scheduler waits: those are in the gateway host's
 * /proc only. A reading stands for the middle of the request.
 */
export function metricsUsage(baseUrl: string, authorization: string): GatewayUsage {
  const read = async (): Promise<{ at: number; body: string | null }> => {
    const sent = performance.now();
    try {
      const res = await fetch(`${baseUrl}/metrics`, { headers: { authorization } });
      const body = await res.text();
      return { at: (sent + performance.now()) / 2, body: res.status === 200 ? body : null };
    } catch {
      return { at: (sent + performance.now()) / 2, body: null };
    }
  };
  const value = (body: string | null, name: string) =>
    (body === null ? null : readSample(body, name)) ?? NaN;
  return {
    from: 'metrics',
    cpu: async () => {
      const { at, body } = await read();
      return {
        at,
        seconds: value(body, CPU_METRIC),
        systemSeconds: value(body, SYSTEM_CPU_METRIC),
        threads: new Map(),
        mainWaitSeconds: NaN,
        mainSleeps: NaN,
      };
    },
    residentMiB: async () => {
      const bytes = value((await read()).body, RESIDENT_METRIC);
      return Math.round((bytes / 2 ** 20) * 10) / 10;
    },
  };
}

/** No figures at all: a gateway elsewhere whose /metrics lacks the process counters. */
export function noUsage(): GatewayUsage {
  return {
    from: 'unavailable',
    cpu: () =>
      Promise.resolve({
        at: performance.now(),
        seconds: NaN,
        systemSeconds: NaN,
        threads: new Map(),
        mainWaitSeconds: NaN,
        mainSleeps: NaN,
      }),
    residentMiB: () => Promise.resolve(NaN),
  };
}

/** A process's resident memory, MiB, from /proc/<pid>/status; NaN where there is none. */
export function residentMiB(pid: number): number {
  try {
    const kib = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? NaN : Math.round((Number(kib) / 1024) * 10) / 10;
  } catch {
    return NaN;
  }
}

/**
 * CPU seconds of a process's main thread and of its other threads together (Node names them all
 * `node`). USER_HZ is 100 on Linux.
 */
function threadSeconds(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const tid of tasks) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const seconds = (Number(fields[11]) + Number(fields[12])) / 100;
    const name = tid === String(pid) ? 'main' : 'other threads';
    byName.set(name, (byName.get(name) ?? 0) + seconds);
  }
  return byName;
}
