import { setTimeout as sleep } from 'node:timers/promises';
import { percentiles } from '../calls/stats.js';
import type { Gateway } from './relay-gateway.js';
import { legSpec } from './relay-gateway.js';
import type { LoadMode, LoadProcess } from './relay-load-client.js';
import { absoluteNow, type LegKind, type RelayLegs } from './relay-legs.js';
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
  leg: LegKind;
  pairs: number;
  idle: Window;
  steps: RelayStep[];
}

export interface MixCase {
  leg: LegKind;
  pairs: number;
  /**
   * How the pairs are bridged: mixed, or relayed (a Dial between two Opus legs relays, its
   * legs decoding all along), each at a call's rate.
   */
  mode: 'mix' | 'relay';
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

/** A pair's A leg hears the load's senders, its B leg sends to a sink. */
const senderThenSink = (leg: number) => (leg % 2 === 0 ? 'sender' : 'sink');

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
  legKind: RelayLegs,
  pairs: number,
  rates: readonly number[],
  timing: Timing,
): Promise<RelayCase> {
  const bridged = await gateway.bridge(await legKind.open(2 * pairs, senderThenSink), 'relay');
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
  await legKind.closeAll();
  return { leg: legKind.kind, pairs, idle, steps };
}

/**
 * `pairs` bridges, mixed or relayed (`mode`); the load process sends a packet every 20 ms to
 * both legs of each.
 */
export async function mixCase(
  gateway: Gateway,
  load: LoadProcess,
  legKind: RelayLegs,
  pairs: number,
  timing: Timing,
  mode: MixCase['mode'] = 'mix',
): Promise<MixCase> {
  const bridged = await gateway.bridge(await legKind.open(2 * pairs, senderThenSink), mode);
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
  await legKind.closeAll();
  return {
    leg: legKind.kind,
    pairs,
    mode,
    idle,
    loaded,
    totals,
    workerUsPerCallSecond: round((loaded.workerCpuShare * 1e6) / pairs),
    packetsSentPerLegPerSecond: round(loaded.sinkReceivedPerSecond / legs.length),
    receivedShare: round(totals.legsReceived / totals.offered, 4),
  };
}

/** Legs opened, brought up and closed, a few at a time: what a leg's start costs. */
export interface HandshakeCase {
  leg: LegKind;
  handshakes: number;
  concurrency: number;
  /** Legs whose first RTP did not come within 5 s. */
  failed: number;
  /** From asking the worker for the leg (with the answer's parameters) to DTLS done, ms. */
  connectedMs: ReturnType<typeof percentiles> | null;
  /** From asking the worker for the leg to its first RTP at the peer, ms. */
  firstPacketMs: ReturnType<typeof percentiles>;
  /** Worker CPU (threads other than the main one) per leg: open, ICE, DTLS, first packets, close. */
  workerUsPerHandshake: number;
  workerThreadUsPerHandshake: number;
}

/**
 * `count` legs, `concurrency` at a time: each is opened on the worker as an answer opens it,
 * connected by the load process (a WebRTC leg: ICE check, DTLS; a PCMU leg needs nothing),
 * waited for until its first RTP reaches the load, and closed.
 */
export async function handshakeCase(
  gateway: Gateway,
  legKind: RelayLegs,
  count: number,
  concurrency: number,
): Promise<HandshakeCase> {
  const connected: number[] = [];
  const first: number[] = [];
  let failed = 0;
  const cpuBefore = [gateway.offMainCpuSeconds(), gateway.workerThreadCpuSeconds()];
  for (let done = 0; done < count; done += concurrency) {
    const started = absoluteNow();
    const legs = await legKind.open(Math.min(concurrency, count - done), () => 'sink', true);
    for (const { arrival } of legs) {
      if (arrival?.connectedAt) connected.push(round(arrival.connectedAt - started));
      if (arrival?.firstPacketAt) first.push(round(arrival.firstPacketAt - started));
      else failed++;
    }
    await legKind.closeAll();
  }
  const cpu = [gateway.offMainCpuSeconds(), gateway.workerThreadCpuSeconds()];
  return {
    leg: legKind.kind,
    handshakes: count,
    concurrency,
    failed,
    connectedMs: connected.length > 0 ? percentiles(connected) : null,
    firstPacketMs: percentiles(first),
    workerUsPerHandshake: round(((cpu[0]! - cpuBefore[0]!) * 1e6) / count, 1),
    workerThreadUsPerHandshake: round(((cpu[1]! - cpuBefore[1]!) * 1e6) / count, 1),
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
