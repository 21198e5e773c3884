import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import { machineCpuSeconds, processCpuSeconds, threadWaitSeconds } from '../api/process-cpu.js';

/** Shares of one core (100 = one core busy) over a stretch of the run. */
export interface CpuShares {
  gatewayPercent: number;
  /** The gateway's main thread (its event loop) and its other threads (media worker, GC...). */
  gatewayThreadsPercent: Record<string, number>;
  sippPercent: number;
  /** This process: the load generator, the application's HTTP server and the INVITE tap. */
  benchPercent: number;
  /** The socket standing in for the carrier's media server. */
  rtpSinkPercent: number;
  /** Every process on the machine, out of 100 x cores. */
  machinePercent: number;
  /** What the machine spent on anything but the above: other work on a shared machine. */
  othersPercent: number;
  /** CPU the hypervisor took while this virtual machine had work, ms, all cores together. */
  stolenMs: number;
  /** How long the gateway's main thread was ready to run but waited for a core, ms. */
  gatewayMainWaitMs: number;
  /** How late this process's event loop ran (its timestamps are late by as much), ms. */
  benchLoopDelayP99Ms: number;
}

interface Reading {
  at: number;
  gateway: number;
  gatewayThreads: Map<string, number>;
  /** CPU seconds of each SIPp child, the last time it was seen alive. */
  sipp: Map<number, number>;
  bench: number;
  sink: number;
  machineBusy: number;
  machineStolen: number;
  gatewayMainWait: number;
}

/**
 * Reads /proc every half second: the gateway's CPU time and its threads', every SIPp this
 * process started (a SIPp that ends takes its last half second with it), this process's own,
 * the RTP sink's and the machine's.
 */
export class CpuSampler {
  private readonly sipp = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly loopDelay: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });

  constructor(
    private readonly gatewayPid: number,
    private readonly sinkPid: number,
  ) {
    this.timer = setInterval(() => this.sample(), 500);
    this.timer.unref();
    this.loopDelay.enable();
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
      gatewayThreads: threadSeconds(this.gatewayPid),
      sipp: new Map(this.sipp),
      bench: (own.user + own.system) / 1e6,
      sink: processCpuSeconds(this.sinkPid),
      ...machineReading(),
      gatewayMainWait: threadWaitSeconds(this.gatewayPid),
    };
  }

  /** Starts a stretch: the event-loop delay is counted from here. */
  begin(): Reading {
    this.loopDelay.reset();
    return this.read();
  }

  shares(from: Reading, to: Reading): CpuShares {
    const seconds = (to.at - from.at) / 1000;
    let sipp = 0;
    for (const [pid, cpu] of to.sipp) sipp += cpu - (from.sipp.get(pid) ?? 0);
    const percent = (cpu: number) => Math.round((cpu / seconds) * 100);
    const threads: Record<string, number> = {};
    for (const [name, cpu] of to.gatewayThreads) {
      const share = percent(cpu - (from.gatewayThreads.get(name) ?? 0));
      if (share > 0) threads[name] = share;
    }
    const shares = {
      gatewayPercent: percent(to.gateway - from.gateway),
      gatewayThreadsPercent: threads,
      sippPercent: percent(sipp),
      benchPercent: percent(to.bench - from.bench),
      rtpSinkPercent: percent(to.sink - from.sink),
      machinePercent: percent(to.machineBusy - from.machineBusy),
    };
    const ours =
      shares.gatewayPercent + shares.sippPercent + shares.benchPercent + shares.rtpSinkPercent;
    return {
      ...shares,
      othersPercent: Math.max(0, shares.machinePercent - ours),
      stolenMs: Math.round((to.machineStolen - from.machineStolen) * 1000),
      gatewayMainWaitMs: Math.round((to.gatewayMainWait - from.gatewayMainWait) * 1000),
      benchLoopDelayP99Ms: Math.round(this.loopDelay.percentile(99) / 1e5) / 10,
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.loopDelay.disable();
  }
}

function statFields(path: string): { name: string; fields: string[] } | null {
  try {
    const stat = readFileSync(path, 'utf8');
    return {
      name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      fields: stat.slice(stat.lastIndexOf(')') + 2).split(' '),
    };
  } catch {
    return null; // gone meanwhile
  }
}

function sippChildren(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      const stat = statFields(`/proc/${entry}/stat`);
      return stat?.name === 'sipp' && Number(stat.fields[1]) === process.pid;
    })
    .map(Number);
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
    const stat = statFields(`/proc/${pid}/task/${tid}/stat`);
    if (!stat) continue;
    const seconds = (Number(stat.fields[11]) + Number(stat.fields[12])) / 100;
    const name = tid === String(pid) ? 'main' : 'other threads';
    byName.set(name, (byName.get(name) ?? 0) + seconds);
  }
  return byName;
}

function machineReading(): { machineBusy: number; machineStolen: number } {
  const { busy, stolen } = machineCpuSeconds();
  return { machineBusy: busy, machineStolen: stolen };
}
