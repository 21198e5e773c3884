import { readdirSync, readFileSync } from 'node:fs';
import { processCpuSeconds } from '../api/process-cpu.js';

/** Shares of one core (100 = one core busy) over a stretch of the run. */
export interface CpuShares {
  gatewayPercent: number;
  sippPercent: number;
  /** This process: the load generator, the application's HTTP server and the INVITE tap. */
  benchPercent: number;
  /** Every process on the machine, out of 100 x cores. */
  machinePercent: number;
}

interface Reading {
  at: number;
  gateway: number;
  /** CPU seconds of each SIPp child, the last time it was seen alive. */
  sipp: Map<number, number>;
  bench: number;
  machineBusy: number;
}

/**
 * Reads /proc every half second: the gateway's CPU time, every SIPp this process started (a
 * SIPp that ends takes its last half second with it), this process's own and the machine's.
 */
export class CpuSampler {
  private readonly sipp = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly gatewayPid: number) {
    this.timer = setInterval(() => this.sample(), 500);
    this.timer.unref();
  }

  private sample(): void {
    for (const pid of sippChildren()) {
      const seconds = processCpuSeconds(pid);
      if (Number.isFinite(seconds)) this.sipp.set(pid, seconds);
    }
  }

  read(): Reading {
    this.sample();
    const own = process.cpuUsage();
    return {
      at: performance.now(),
      gateway: processCpuSeconds(this.gatewayPid),
      sipp: new Map(this.sipp),
      bench: (own.user + own.system) / 1e6,
      machineBusy: machineBusySeconds(),
    };
  }

  static shares(from: Reading, to: Reading): CpuShares {
    const seconds = (to.at - from.at) / 1000;
    let sipp = 0;
    for (const [pid, cpu] of to.sipp) sipp += cpu - (from.sipp.get(pid) ?? 0);
    const percent = (cpu: number) => Math.round((cpu / seconds) * 100);
    return {
      gatewayPercent: percent(to.gateway - from.gateway),
      sippPercent: percent(sipp),
      benchPercent: percent(to.bench - from.bench),
      machinePercent: percent(to.machineBusy - from.machineBusy),
    };
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

function sippChildren(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (name === 'sipp' && ppid === process.pid) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** CPU seconds the whole machine has been busy (all but idle and iowait), from /proc/stat. */
function machineBusySeconds(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    const total = ticks.reduce((a, b) => a + b, 0);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    // USER_HZ is 100 on Linux
    return (total - idle) / 100;
  } catch {
    return NaN;
  }
}
