import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import { machineCpuSeconds, processCpuSeconds } from '../api/process-cpu.js';
import type { GatewayCpuReading, GatewayUsage } from './gateway-usage.js';

/** Shares of one core (100 = one core busy) over a stretch of the run. */
export interface CpuShares {
  /** NaN (null in the results) when the gateway's CPU could not be read. */
  gatewayPercent: number;
  /** The part of gatewayPercent the kernel spent on the gateway's behalf; NaN when unknown. */
  gatewaySystemPercent: number;
  /**
   * The gateway's main thread (its event loop) and its other threads (media worker, GC...);
   * empty for a gateway elsewhere.
   */
  gatewayThreadsPercent: Record<string, number>;
  sippPercent: number;
  /** This process: the load generator, the application's HTTP server and the INVITE tap. */
  benchPercent: number;
  /** The socket standing in for the carrier's media server. */
  rtpSinkPercent: number;
  /** Every process on the machine (the bench's), out of 100 x cores. */
  machinePercent: number;
  /**
   * What the machine spent on anything but the above: other work on a shared machine, and the
   * gateway itself when it runs here but the bench did not start it.
   */
  othersPercent: number;
  /** CPU the hypervisor took while this virtual machine had work, ms, all cores together. */
  stolenMs: number;
  /** How long the gateway's main thread was ready to run but waited for a core, ms (NaN: unknown). */
  gatewayMainWaitMs: number;
  /** How many times the gateway's main thread went to sleep and was woken (NaN: unknown). */
  gatewayMainSleeps: number;
  /** CPU seconds of the gateway's main thread (NaN: unknown). */
  gatewayMainSeconds: number;
  /** How late this process's event loop ran (its timestamps are late by as much), ms. */
  benchLoopDelayP99Ms: number;
}

interface Reading {
  at: number;
  gateway: GatewayCpuReading;
  /** CPU seconds of each SIPp child, the last time it was seen alive. */
  sipp: Map<number, number>;
  bench: number;
  sink: number;
  machineBusy: number;
  machineStolen: number;
}

/**
 * Reads /proc every half second: every SIPp this process started (a SIPp that ends takes its
 * last half second with it), this process's own CPU time, the RTP sink's and the machine's; and
 * at each reading the gateway's CPU time and its threads', from wherever `gateway` reads them
 * (/proc for a gateway the bench started, /metrics for one elsewhere). A gateway the bench did
 * not start counts in the machine's figures only if it runs here, and then under others.
 */
export class CpuSampler {
  private readonly sipp = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly loopDelay: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });

  constructor(
    private readonly gateway: GatewayUsage,
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

  async read(): Promise<Reading> {
    this.sample();
    const own = process.cpuUsage();
    const here = {
      at: performance.now(),
      sipp: new Map(this.sipp),
      bench: (own.user + own.system) / 1e6,
      sink: processCpuSeconds(this.sinkPid),
      ...machineReading(),
    };
    return { ...here, gateway: await this.gateway.cpu() };
  }

  /** Starts a stretch: the event-loop delay is counted from here. */
  begin(): Promise<Reading> {
    this.loopDelay.reset();
    return this.read();
  }

  shares(from: Reading, to: Reading): CpuShares {
    const seconds = (to.at - from.at) / 1000;
    let sipp = 0;
    for (const [pid, cpu] of to.sipp) sipp += cpu - (from.sipp.get(pid) ?? 0);
    // To a tenth of a percent: a few streams' share of a core is a few percent.
    const percent = (cpu: number) => Math.round((cpu / seconds) * 1000) / 10;
    // A reading from /metrics stands for the moment the gateway answered, not `at`.
    const gatewaySeconds = (to.gateway.at - from.gateway.at) / 1000;
    const gatewayPercent = (cpu: number) => Math.round((cpu / gatewaySeconds) * 1000) / 10;
    const threads: Record<string, number> = {};
    for (const [name, cpu] of to.gateway.threads) {
      const share = gatewayPercent(cpu - (from.gateway.threads.get(name) ?? 0));
      if (share > 0) threads[name] = share;
    }
    const shares = {
      gatewayPercent: gatewayPercent(to.gateway.seconds - from.gateway.seconds),
      gatewaySystemPercent: gatewayPercent(to.gateway.systemSeconds - from.gateway.systemSeconds),
      gatewayThreadsPercent: threads,
      sippPercent: percent(sipp),
      benchPercent: percent(to.bench - from.bench),
      rtpSinkPercent: percent(to.sink - from.sink),
      machinePercent: percent(to.machineBusy - from.machineBusy),
    };
    // Only a gateway the bench started is known to run on this machine.
    const gatewayHere = this.gateway.from === 'proc' ? shares.gatewayPercent : 0;
    const ours = gatewayHere + shares.sippPercent + shares.benchPercent + shares.rtpSinkPercent;
    return {
      ...shares,
      othersPercent: Math.max(0, shares.machinePercent - ours),
      stolenMs: Math.round((to.machineStolen - from.machineStolen) * 1000),
      gatewayMainWaitMs: Math.round(
        (to.gateway.mainWaitSeconds - from.gateway.mainWaitSeconds) * 1000,
      ),
      gatewayMainSleeps: to.gateway.mainSleeps - from.gateway.mainSleeps,
      gatewayMainSeconds:
        (to.gateway.threads.get('main') ?? NaN) - (from.gateway.threads.get('main') ?? NaN),
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

function machineReading(): { machineBusy: number; machineStolen: number } {
  const { busy, stolen } = machineCpuSeconds();
  return { machineBusy: busy, machineStolen: stolen };
}
