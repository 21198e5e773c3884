import { setTimeout as sleep } from 'node:timers/promises';
import type { Gateway } from './relay-gateway.js';
import { legSpec } from './relay-gateway.js';
import type { LoadMode, LoadProcess } from './relay-load-client.js';
import { measure, measureUnderLoad, type StepTotals, type Window } from './relay-measure.js';

/** How long each part of a case runs, in ms. */
export interface Timing {
  idleMs: number;
  warmupMs: number;
  windowMs: number;
}

/** One offered load on relay bridges, with the worker's CPU per packet relayed. */
export interface RelayStep {
  offered: string;
  window: Window;
  totals: StepTotals;
  /** Measured: relayed packets that reached the sinks, per second of the window. */
  relayedPerSecond: number;
  /** Share of the packets sent over the whole step that never reached a sink. */
  lossShare: number;
  /** Worker CPU per packet relayed, idle ticking included. */
  workerUsPerPacket: number;
  /** The same less the worker's CPU with the same bridges and no RTP. */
  workerNetUsPerPacket: number;
}

export interface RelayCase {
  pairs: number;
  idle: Window;
  steps: RelayStep[];
}

export interface MixCase {
  pairs: number;
  /** Bridged, nothing received: each leg still sends its 50 packets/s (silence). */
  idle: Window;
  loaded: Window;
  totals: StepTotals;
  /** Worker CPU per call (a bridged pair, both legs) per second of call. */
  workerUsPerCallSecond: number;
  /** Measured at the sinks: packets per leg per second the worker sent while loaded. */
  packetsSentPerLegPerSecond: number;
  /** Share of the packets sent to the legs over the whole step that they took in. */
  receivedShare: number;
}

/** The worker's memory with sessions open: samples over a second or two, after a settle. */
export interface MemorySamples {
  sessions: number;
  rss: number[];
  heapUsed: number[];
}

export interface MemoryCase {
  settleMs: number;
  before: MemorySamples;
  plain: MemorySamples;
  withNoiseSuppression: MemorySamples;
  /** Worker CPU with every session open and sending silence, nothing received. */
  workerCpuShareAllOpen: number;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

const perPacket = (window: Window, idle: Window) => ({
  relayedPerSecond: window.sinkReceivedPerSecond,
  workerUsPerPacket: round((window.workerCpuShare * 1e6) / window.sinkReceivedPerSecond),
  workerNetUsPerPacket: round(
    ((window.workerCpuShare - idle.workerCpuShare) * 1e6) / window.sinkReceivedPerSecond,
  ),
});

/**
 * `pairs` relay bridges; the load process sends to every A leg round-robin at each rate and
 * then flat out, and the B legs relay to its sinks.
 */
export async function relayCase(
  gateway: Gateway,
  load: LoadProcess,
  sinks: readonly number[],
  pairs: number,
  rates: readonly number[],
  timing: Timing,
): Promise<RelayCase> {
  const bridged = await gateway.bridgedPairs(pairs, 'relay', (i) => sinks[i % sinks.length]!);
  const legs = bridged.flatMap((p) => [p.a, p.b]);
  const targets = bridged.map((p) => p.aPort);
  await sleep(500);
  const idle = await measure(gateway, load, timing.idleMs);
  const modes: Array<[string, LoadMode]> = [
    ...rates.map((r): [string, LoadMode] => [`${r}/s`, { kind: 'rate', packetsPerSecond: r }]),
    ['flat out', { kind: 'max' }],
  ];
  const steps: RelayStep[] = [];
  for (const [offered, mode] of modes) {
    const { window, totals } = await measureUnderLoad(
      gateway,
      load,
      targets,
      mode,
      legs,
      timing.warmupMs,
      timing.windowMs,
    );
    const lossShare = round(1 - totals.sinkReceived / totals.offered, 4);
    steps.push({ offered, window, totals, lossShare, ...perPacket(window, idle) });
  }
  await gateway.destroyAll();
  return { pairs, idle, steps };
}

/** `pairs` mix bridges; the load process sends a packet every 20 ms to both legs of each. */
export async function mixCase(
  gateway: Gateway,
  load: LoadProcess,
  sinks: readonly number[],
  pairs: number,
  timing: Timing,
): Promise<MixCase> {
  const bridged = await gateway.bridgedPairs(pairs, 'mix', (i) => sinks[i % sinks.length]!);
  const legs = bridged.flatMap((p) => [p.a, p.b]);
  const targets = bridged.flatMap((p) => [p.aPort, p.bPort]);
  await sleep(500);
  const idle = await measure(gateway, load, timing.idleMs);
  const { window: loaded, totals } = await measureUnderLoad(
    gateway,
    load,
    targets,
    { kind: 'paced', everyMs: 20 },
    legs,
    timing.warmupMs,
    timing.windowMs,
  );
  await gateway.destroyAll();
  return {
    pairs,
    idle,
    loaded,
    totals,
    workerUsPerCallSecond: round((loaded.workerCpuShare * 1e6) / pairs),
    packetsSentPerLegPerSecond: round(loaded.sinkReceivedPerSecond / legs.length),
    receivedShare: round(totals.legsReceived / totals.offered, 4),
  };
}

async function memorySamples(gateway: Gateway, sessions: number): Promise<MemorySamples> {
  const out: MemorySamples = { sessions, rss: [], heapUsed: [] };
  for (let i = 0; i < 16; i++) {
    const m = await gateway.memory();
    out.rss.push(m.processRss);
    out.heapUsed.push(m.heapUsed);
    await sleep(125);
  }
  return out;
}

/**
 * Opens `sessions` legs on a fresh worker, half without noise suppression and then half at
 * noise_cancellation_level 100, each with a remote (so each sends its 50 packets/s of
 * silence), sampling the worker's memory before and after each half.
 */
export async function memoryCase(
  gateway: Gateway,
  load: LoadProcess,
  sinks: readonly number[],
  sessions: number,
  settleMs: number,
): Promise<MemoryCase> {
  const half = Math.floor(sessions / 2);
  const remote = (i: number) => sinks[i % sinks.length]!;
  // One of each kind first, so code and native libraries loaded once are not counted per call.
  await gateway.openMany([legSpec(remote(0)), legSpec(remote(1), { noiseCancellationLevel: 100 })]);
  await gateway.destroyAll();
  await sleep(settleMs);
  const before = await memorySamples(gateway, 0);
  await gateway.openMany(Array.from({ length: half }, (_, i) => legSpec(remote(i))));
  await sleep(settleMs);
  const plain = await memorySamples(gateway, half);
  await gateway.openMany(
    Array.from({ length: half }, (_, i) => legSpec(remote(i), { noiseCancellationLevel: 100 })),
  );
  await sleep(settleMs);
  const withNoiseSuppression = await memorySamples(gateway, 2 * half);
  const busy = await measure(gateway, load, 2000);
  await gateway.destroyAll();
  return {
    settleMs,
    before,
    plain,
    withNoiseSuppression,
    workerCpuShareAllOpen: busy.workerCpuShare,
  };
}
