import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { Gateway } from './relay-gateway.js';
import type { LoadCounts, LoadMode, LoadProcess } from './relay-load-client.js';
import { udpReceiveBufferErrors } from './relay-threads.js';
import { machineCpuSeconds, processCpuSeconds } from '../api/process-cpu.js';

/** Everything read at one instant of a run. */
interface Sample {
  atMs: number;
  workerCpu: number;
  workerThreadCpu: number;
  workerPreemptions: number;
  mainCpu: number;
  loadCpu: number;
  machineBusy: number;
  load: LoadCounts;
  receiveBufferErrors: number;
}

/** What happened between two samples, per second of wall time. */
export interface Window {
  seconds: number;
  /**
   * Share of one core the media worker used (1 = one core flat out): the gateway process's
   * CPU less its main thread's, so V8's helper threads' GC work for the worker counts too.
   */
  workerCpuShare: number;
  /** The worker thread alone. */
  workerThreadCpuShare: number;
  /** Times per second the worker thread was switched out while it could still run. */
  workerPreemptionsPerSecond: number;
  /** The gateway process's main thread, which only holds the pool. */
  mainThreadCpuShare: number;
  /** The load process (generator and sinks together). */
  loadProcessCpuShare: number;
  /** Every core of the machine together, anything running on it (kernel and softirq too). */
  machineBusyCores: number;
  /**
   * The machine's busy cores less the gateway and load processes: the kernel's loopback work
   * done outside them, and whatever else runs on the box (other work skews a window).
   */
  otherBusyCores: number;
  /** RTP packets the load process sent to the gateway. */
  offeredPerSecond: number;
  /** RTP audio packets that reached the load process's sockets. */
  sinkReceivedPerSecond: number;
  /** Packets a rate plan gave up on because the generator fell behind. */
  generatorSkippedPerSecond: number;
  /** Datagrams the kernel dropped machine-wide for a full receive buffer. */
  receiveBufferDrops: number;
  /** Paced mode: inter-arrival gaps per leg over 30 ms at the sinks, as a share of all gaps. */
  lateGapShare: number | null;
  /** Paced mode: the longest inter-arrival gap of any leg at the sinks. */
  maxGapMs: number | null;
}

/**
 * One IPC round trip and a few /proc reads, so every figure is of nearly the same instant
 * (sessionStats for a thousand legs would take long enough under load to skew a window).
 */
async function sample(gateway: Gateway, load: LoadProcess): Promise<Sample> {
  const counts = await load.request({ type: 'counts' });
  return {
    atMs: performance.now(),
    workerCpu: gateway.offMainCpuSeconds(),
    workerThreadCpu: gateway.workerThreadCpuSeconds(),
    workerPreemptions: gateway.workerPreemptions(),
    mainCpu: gateway.mainThreadCpuSeconds(),
    loadCpu: processCpuSeconds(load.pid),
    machineBusy: machineCpuSeconds().busy,
    load: counts,
    receiveBufferErrors: udpReceiveBufferErrors(),
  };
}

/** Time for the worker to work through what its sockets hold once the load stops. */
const DRAIN_MS = 500;

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Samples, waits `ms`, samples again, and reports the difference per second. */
export async function measure(gateway: Gateway, load: LoadProcess, ms: number): Promise<Window> {
  const a = await sample(gateway, load);
  await sleep(ms);
  const b = await sample(gateway, load);
  const s = (b.atMs - a.atMs) / 1000;
  const gaps = b.load.gaps - a.load.gaps;
  return {
    seconds: round(s),
    workerCpuShare: round((b.workerCpu - a.workerCpu) / s),
    workerThreadCpuShare: round((b.workerThreadCpu - a.workerThreadCpu) / s),
    workerPreemptionsPerSecond: Math.round((b.workerPreemptions - a.workerPreemptions) / s),
    mainThreadCpuShare: round((b.mainCpu - a.mainCpu) / s),
    loadProcessCpuShare: round((b.loadCpu - a.loadCpu) / s),
    machineBusyCores: round((b.machineBusy - a.machineBusy) / s),
    otherBusyCores: round(
      (b.machineBusy - a.machineBusy - (b.workerCpu - a.workerCpu) - (b.mainCpu - a.mainCpu)) / s -
        (b.loadCpu - a.loadCpu) / s,
    ),
    offeredPerSecond: Math.round((b.load.sent - a.load.sent) / s),
    sinkReceivedPerSecond: Math.round((b.load.received - a.load.received) / s),
    generatorSkippedPerSecond: Math.round((b.load.skipped - a.load.skipped) / s),
    receiveBufferDrops: b.receiveBufferErrors - a.receiveBufferErrors,
    lateGapShare: gaps > 0 ? round((b.load.lateGaps - a.load.lateGaps) / gaps, 4) : null,
    maxGapMs: gaps > 0 ? round(b.load.maxGapMs, 1) : null,
  };
}

/** Counts over a whole step, from before the load starts to after the worker has drained. */
export interface StepTotals {
  offered: number;
  /** The legs' sessionStats packetsReceived and packetsSent. */
  legsReceived: number;
  legsSent: number;
  sinkReceived: number;
}

/**
 * Starts a load plan, lets it settle for `warmupMs`, measures for `ms`, stops it and lets the
 * worker drain; the legs' own counters are read before and after the whole step.
 */
export async function measureUnderLoad(
  gateway: Gateway,
  load: LoadProcess,
  targets: number[],
  mode: LoadMode,
  legs: readonly string[],
  warmupMs: number,
  ms: number,
): Promise<{ window: Window; totals: StepTotals }> {
  const legsBefore = await gateway.totals(legs);
  const loadBefore = await load.request({ type: 'start', targets, mode });
  await sleep(warmupMs);
  const window = await measure(gateway, load, ms);
  await load.request({ type: 'stop' });
  await sleep(DRAIN_MS);
  const loadAfter = await load.request({ type: 'counts' });
  const legsAfter = await gateway.totals(legs);
  return {
    window,
    totals: {
      offered: loadAfter.sent - loadBefore.sent,
      legsReceived: legsAfter.packetsReceived - legsBefore.packetsReceived,
      legsSent: legsAfter.packetsSent - legsBefore.packetsSent,
      sinkReceived: loadAfter.received - loadBefore.received,
    },
  };
}
