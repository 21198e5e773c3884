import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeRunContext, type Machine } from '../api/machine.js';
import type { Revision } from '../api/revision.js';
import type { LegKind } from './relay-legs.js';
import type { LegComparison } from './relay-legs-report.js';
import type {
  HandshakeCase,
  MemoryCase,
  MemorySamples,
  MixCase,
  RelayCase,
} from './relay-cases.js';

export interface RelayPlan {
  relayPairs: number[];
  relayRates: number[];
  mixPairs: number[];
  memorySessions: number;
  idleMs: number;
  warmupMs: number;
  windowMs: number;
  mixWindowMs: number;
  settleMs: number;
  /** Legs brought up one handful at a time, and how many at once, for each kind of leg. */
  handshakes: number;
  handshakeConcurrency: number;
  /** pcmu, then webrtc when asked: the kinds of leg each case runs with. */
  legs: LegKind[];
}

/** The goals of the issue: packets relayed per second per worker, and memory per call. */
export const RELAY_GOAL_PER_SECOND = 100_000;
export const MEMORY_GOAL_KB = 200;

export interface RelaySummary {
  pairs: number;
  /**
   * Measured: the most relayed per second at a step that lost under 1% of what was offered and
   * kept within 1% of the offered rate during the window.
   */
  measuredSustainedPerSecond: number;
  sustainedOffered: string | null;
  /** The step with the most relayed, from which the figures below come. */
  offered: string;
  /** Measured: relayed packets per second at the sinks, and the share of the step's lost. */
  measuredRelayedPerSecond: number;
  lossShare: number;
  workerCpuShare: number;
  /** Cores busy with other things at that step (see Window.otherBusyCores). */
  otherBusyCores: number;
  workerUsPerPacket: number;
  workerNetUsPerPacket: number;
  /** Derived: 1e6 / µs per packet, the rate one fully busy worker would relay. */
  derivedBusyWorkerPerSecond: number;
  /** Derived: (1e6 - idle µs/s) / net µs per packet, with these bridges' idle cost paid first. */
  derivedBusyWorkerNetPerSecond: number;
  /** Derived from the worker thread's CPU alone, its GC helpers left out. */
  workerThreadUsPerPacket: number;
  derivedBusyWorkerThreadPerSecond: number;
  goalPerSecond: number;
  measuredGoalMet: boolean;
  derivedGoalMet: boolean;
}

export interface MixSummary {
  pairs: number;
  workerCpuShare: number;
  workerUsPerCallSecond: number;
  /** Derived: 1e6 / µs per call-second, the calls one fully busy worker would mix. */
  derivedBusyWorkerCalls: number;
  packetsSentPerLegPerSecond: number;
  lateGapShare: number | null;
  /** Legs sent within 2% of 50 packets/s on average (measured at the sinks). */
  ticksKeptPace: boolean;
  /** And under 1% of the gaps between a leg's packets at the sinks were over 30 ms. */
  ticksOnTime: boolean;
}

export interface MemorySummary {
  /** Median rss and heapUsed growth over the sessions of each kind, KB per session. */
  rssKbPerSessionPlain: number;
  rssKbPerSessionNoiseSuppression: number;
  rssKbPerSessionAll: number;
  heapKbPerSessionPlain: number;
  heapKbPerSessionNoiseSuppression: number;
  heapKbPerSessionAll: number;
  goalKb: number;
  /** Against the goal per call leg (one session) and per bridged call (two sessions). */
  goalMetPerSession: boolean;
  goalMetPerBridgedCall: boolean;
}

export interface MediaRelayRun {
  benchmark: 'media-relay';
  date: string;
  machine: Machine;
  revision: Revision;
  loadAverageAfter: number[];
  plan: RelayPlan;
  portRanges: { bridges: { min: number; max: number }; memory: { min: number; max: number } };
  /** CPU seconds of each thread the bridges' pool started (the worker, and any helper). */
  workerThreadsCpuSeconds: Record<string, number>;
  relay: RelayCase[];
  mix: MixCase[];
  /** Legs opened, brought up and closed, each kind (with --legs). */
  handshakes: HandshakeCase[];
  memory: MemoryCase;
  summary: { relay: RelaySummary; mix: MixSummary[]; memory: MemorySummary };
  /** Each WebRTC figure beside the PCMU one of the same case, with the ratio. */
  webrtcAgainstPcmu: LegComparison[];
  warnings: string[];
  notes: string[];
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** rss by the median of the samples; heapUsed by the least, the nearest to a heap after GC. */
const settled = (samples: MemorySamples, field: 'rss' | 'heapUsed') =>
  field === 'rss' ? median(samples.rss) : Math.min(...samples.heapUsed);

const kbPerSession = (from: MemorySamples, to: MemorySamples, field: 'rss' | 'heapUsed'): number =>
  round((settled(to, field) - settled(from, field)) / (to.sessions - from.sessions) / 1024);

export function summarize(
  relay: RelayCase[],
  mix: MixCase[],
  memory: MemoryCase,
): MediaRelayRun['summary'] {
  // The goals are the plain legs'; WebRTC legs are compared with them apart (relay-legs-report).
  relay = relay.filter((c) => c.leg === 'pcmu');
  mix = mix.filter((c) => c.leg === 'pcmu' && c.mode !== 'relay');
  const largest = relay.reduce((a, b) => (b.pairs > a.pairs ? b : a));
  const best = largest.steps.reduce((a, b) => (b.relayedPerSecond > a.relayedPerSecond ? b : a));
  // Sustained: nothing lost over the step, and the worker kept pace within the window.
  const sustained = largest.steps
    .filter(
      (step) =>
        step.lossShare < 0.01 && step.relayedPerSecond >= 0.99 * step.window.offeredPerSecond,
    )
    .reduce<{ relayed: number; offered: string | null }>(
      (a, step) =>
        step.relayedPerSecond > a.relayed
          ? { relayed: step.relayedPerSecond, offered: step.offered }
          : a,
      { relayed: 0, offered: null },
    );
  const derived = Math.round(1e6 / best.workerUsPerPacket);
  const threadUs = (best.window.workerThreadCpuShare * 1e6) / best.relayedPerSecond;
  const idleUs = largest.idle.workerCpuShare * 1e6;
  const derivedNet = Math.round((1e6 - idleUs) / best.workerNetUsPerPacket);
  const { before, plain, withNoiseSuppression: nc } = memory;
  const rssAll = kbPerSession(before, nc, 'rss');
  const heapAll = kbPerSession(before, nc, 'heapUsed');
  return {
    relay: {
      pairs: largest.pairs,
      measuredSustainedPerSecond: sustained.relayed,
      sustainedOffered: sustained.offered,
      offered: best.offered,
      measuredRelayedPerSecond: best.relayedPerSecond,
      lossShare: best.lossShare,
      workerCpuShare: best.window.workerCpuShare,
      otherBusyCores: best.window.otherBusyCores,
      workerUsPerPacket: best.workerUsPerPacket,
      workerNetUsPerPacket: best.workerNetUsPerPacket,
      derivedBusyWorkerPerSecond: derived,
      derivedBusyWorkerNetPerSecond: derivedNet,
      workerThreadUsPerPacket: Math.round(threadUs * 100) / 100,
      derivedBusyWorkerThreadPerSecond: Math.round(1e6 / threadUs),
      goalPerSecond: RELAY_GOAL_PER_SECOND,
      measuredGoalMet: sustained.relayed >= RELAY_GOAL_PER_SECOND,
      derivedGoalMet: derived >= RELAY_GOAL_PER_SECOND,
    },
    mix: mix.map((m) => ({
      pairs: m.pairs,
      workerCpuShare: m.loaded.workerCpuShare,
      workerUsPerCallSecond: m.workerUsPerCallSecond,
      derivedBusyWorkerCalls: Math.floor(1e6 / m.workerUsPerCallSecond),
      packetsSentPerLegPerSecond: m.packetsSentPerLegPerSecond,
      lateGapShare: m.loaded.lateGapShare,
      ticksKeptPace: Math.abs(m.packetsSentPerLegPerSecond - 50) <= 1,
      ticksOnTime: (m.loaded.lateGapShare ?? 0) < 0.01,
    })),
    memory: {
      rssKbPerSessionPlain: kbPerSession(before, plain, 'rss'),
      rssKbPerSessionNoiseSuppression: kbPerSession(plain, nc, 'rss'),
      rssKbPerSessionAll: rssAll,
      heapKbPerSessionPlain: kbPerSession(before, plain, 'heapUsed'),
      heapKbPerSessionNoiseSuppression: kbPerSession(plain, nc, 'heapUsed'),
      heapKbPerSessionAll: heapAll,
      goalKb: MEMORY_GOAL_KB,
      goalMetPerSession: rssAll <= MEMORY_GOAL_KB,
      goalMetPerBridgedCall: 2 * rssAll <= MEMORY_GOAL_KB,
    },
  };
}

/** Prints the tables and writes `media-relay-<date>.json` and `media-relay-latest.json`. */
export function reportRelayRun(run: MediaRelayRun, resultsDir: string): string[] {
  console.log(describe(run));
  mkdirSync(resultsDir, { recursive: true });
  const json = JSON.stringify(run, null, 2) + '\n';
  const stamp = run.date.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
  const written = [
    join(resultsDir, `media-relay-${stamp}.json`),
    join(resultsDir, 'media-relay-latest.json'),
  ];
  for (const file of written) writeFileSync(file, json);
  return written;
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

const pct = (share: number) => `${Math.round(share * 100)}%`;
const int = (n: number) => Math.round(n).toLocaleString('en-US');

const RELAY_HEADER = [
  'pairs',
  'offered',
  'sent/s',
  'relayed/s',
  'loss',
  'legs in',
  'legs out',
  'sinks',
  'kernel drops',
  'worker cpu',
  'thread cpu',
  'preempt/s',
  'µs/pkt',
  'net µs/pkt',
  'busy worker pkt/s',
  'load cpu',
  'other cores busy',
];

function relayRows(c: RelayCase): string[][] {
  const pairs = c.leg === 'pcmu' ? String(c.pairs) : `${c.pairs} ${c.leg}`;
  const idle = [pairs, 'idle', '0', '0', '-', '-', '-', '-'];
  const w = c.idle;
  const rows = [
    [
      ...idle,
      int(w.receiveBufferDrops),
      pct(w.workerCpuShare),
      pct(w.workerThreadCpuShare),
      int(w.workerPreemptionsPerSecond),
      '-',
      '-',
      '-',
    ],
    ...c.steps.map((step) => [
      pairs,
      step.offered,
      int(step.window.offeredPerSecond),
      int(step.relayedPerSecond),
      `${(step.lossShare * 100).toFixed(2)}%`,
      int(step.totals.legsReceived),
      int(step.totals.legsSent),
      int(step.totals.sinkReceived),
      int(step.window.receiveBufferDrops),
      pct(step.window.workerCpuShare),
      pct(step.window.workerThreadCpuShare),
      int(step.window.workerPreemptionsPerSecond),
      step.workerUsPerPacket.toFixed(2),
      step.workerNetUsPerPacket.toFixed(2),
      int(1e6 / step.workerUsPerPacket),
    ]),
  ];
  const windows = [c.idle, ...c.steps.map((step) => step.window)];
  return rows.map((row, i) => [
    ...row,
    pct(windows[i]!.loadProcessCpuShare),
    windows[i]!.otherBusyCores.toFixed(2),
  ]);
}

function describe(run: MediaRelayRun): string {
  const s = run.summary;
  const out = [
    '',
    `Media relay, mix and memory on one worker, ${run.date}`,
    ...describeRunContext(run),
    '',
    'Relay bridges (A legs fed by the load process, B legs relaying to its sinks); cpu as a ' +
      'share of one core',
  ];
  out.push(...table(RELAY_HEADER, run.relay.flatMap(relayRows)), '');
  out.push(
    "Mix bridges, and relays at a call's rate (every leg fed a packet each 20 ms by the load " +
      'process, both directions)',
  );
  const mixRows = run.mix.flatMap((c) =>
    [
      ['idle', c.idle],
      ['paced', c.loaded],
    ].map(([label, w]) => {
      const window = w as typeof c.idle;
      const legs = 2 * c.pairs;
      return [
        [String(c.pairs), c.leg === 'pcmu' ? '' : c.leg, c.mode === 'relay' ? 'relayed' : '']
          .filter(Boolean)
          .join(' '),
        label as string,
        (window.offeredPerSecond / legs).toFixed(1),
        (window.sinkReceivedPerSecond / legs).toFixed(1),
        label === 'idle' ? '-' : `${(c.receivedShare * 100).toFixed(2)}%`,
        window.lateGapShare === null ? '-' : `${(window.lateGapShare * 100).toFixed(2)}%`,
        window.maxGapMs === null ? '-' : window.maxGapMs.toFixed(0),
        int(window.receiveBufferDrops),
        pct(window.workerCpuShare),
        pct(window.workerThreadCpuShare),
        int(window.workerPreemptionsPerSecond),
        int((window.workerCpuShare * 1e6) / c.pairs),
        pct(window.loadProcessCpuShare),
        window.otherBusyCores.toFixed(2),
      ];
    }),
  );
  out.push(
    ...table(
      [
        'pairs',
        'load',
        'sent to leg/s',
        'leg sent/s',
        'legs took in',
        'gaps>30ms',
        'max gap ms',
        'kernel drops',
        'worker cpu',
        'thread cpu',
        'preempt/s',
        'µs/call-s',
        'load cpu',
        'other cores busy',
      ],
      mixRows,
    ),
    '',
  );
  const mem = run.memory;
  const mb = (b: number) => (b / 2 ** 20).toFixed(1);
  out.push(
    `Memory (fresh worker; ${mem.before.rss.length} samples over 2 s after ${mem.settleMs} ms ` +
      'settle; rss is the whole process):',
    ...table(
      ['sessions', 'rss MiB (median)', 'heapUsed MiB (least)'],
      [mem.before, mem.plain, mem.withNoiseSuppression].map((x) => [
        String(x.sessions),
        mb(settled(x, 'rss')),
        mb(settled(x, 'heapUsed')),
      ]),
    ),
    `  plain sessions: ${s.memory.rssKbPerSessionPlain} KB rss, ${s.memory.heapKbPerSessionPlain} KB heap each; ` +
      `noise suppression 100: ${s.memory.rssKbPerSessionNoiseSuppression} KB rss, ` +
      `${s.memory.heapKbPerSessionNoiseSuppression} KB heap each; all: ${s.memory.rssKbPerSessionAll} KB rss`,
    `  worker cpu with all ${mem.withNoiseSuppression.sessions} open and sending silence: ` +
      pct(mem.workerCpuShareAllOpen),
    '',
  );
  const r = s.relay;
  out.push(
    `relay, measured (${r.pairs} pairs, at the sinks): ${int(r.measuredSustainedPerSecond)} ` +
      `packets/s relayed with under 1% loss (offered ${r.sustainedOffered ?? '-'}); at most ` +
      `${int(r.measuredRelayedPerSecond)}/s (offered ${r.offered}, ` +
      `${(r.lossShare * 100).toFixed(1)}% lost), worker at ${pct(r.workerCpuShare)}, ` +
      `${r.otherBusyCores.toFixed(2)} cores busy with other work`,
    `relay, derived: ${r.workerUsPerPacket.toFixed(2)} µs of worker cpu per packet -> ` +
      `${int(r.derivedBusyWorkerPerSecond)} packets/s for a fully busy worker ` +
      `(${int(r.derivedBusyWorkerNetPerSecond)}/s from the net ${r.workerNetUsPerPacket.toFixed(2)} µs ` +
      `after the idle cost; ${int(r.derivedBusyWorkerThreadPerSecond)}/s from the worker thread's ` +
      `${r.workerThreadUsPerPacket.toFixed(2)} µs alone); goal ${int(r.goalPerSecond)}/s: measured ` +
      `${r.measuredGoalMet ? 'met' : 'not met'}, derived ${r.derivedGoalMet ? 'met' : 'not met'}`,
    ...s.mix.map(
      (x) =>
        `mix, ${x.pairs} calls: worker ${pct(x.workerCpuShare)}, ${int(x.workerUsPerCallSecond)} µs ` +
        `per call-second -> derived ${int(x.derivedBusyWorkerCalls)} calls per fully busy worker; ` +
        `${x.packetsSentPerLegPerSecond} packets/s per leg: ticks ` +
        (x.ticksKeptPace ? 'kept pace' : 'fell behind') +
        `, ${((x.lateGapShare ?? 0) * 100).toFixed(2)}% of gaps over 30 ms`,
    ),
    `memory: ${s.memory.rssKbPerSessionAll} KB rss per session (goal ${s.memory.goalKb} KB: ` +
      `${s.memory.goalMetPerSession ? 'met' : 'not met'} per session, ` +
      `${s.memory.goalMetPerBridgedCall ? 'met' : 'not met'} per bridged call of two sessions)`,
    '',
    ...run.warnings.map((w) => `worker warning: ${w}`),
    ...run.notes.map((n) => `note: ${n}`),
    '',
  );
  return out.join('\n');
}
