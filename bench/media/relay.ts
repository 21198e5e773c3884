/**
 * How many RTP packets can one media worker relay, how many calls can it mix, and what does a
 * call cost in memory?
 *
 *   npm run bench:media-relay [-- --pairs 500 --small-pairs 50 --rates 20000,50000,80000,100000,120000
 *     --mix-pairs 200,300,500 --sessions 1000 --window-ms 4000 --legs pcmu,webrtc --handshakes 200]
 *
 * Each mix case runs a second time with its pairs relayed at a call's rate (a Dial between two
 * Opus legs relays). With --legs pcmu,webrtc (the default) the relay and mix cases run twice,
 * the second time with WebRTC legs (ICE-lite, DTLS-SRTP, Opus) that the load process
 * connects and feeds SRTP-protected Opus, and a case of legs brought up one handful at a time
 * (open with the answer's parameters, ICE, DTLS, first RTP, close) runs for each kind; the
 * WebRTC figures are printed beside the PCMU ones with their ratio. --legs pcmu runs the
 * plain legs alone.
 *
 * Runs a one-worker MediaWorkerPool in this process and a load generator with its sinks in a
 * child process, both on loopback UDP, and reads the worker thread's own CPU from /proc.
 * Prints tables and writes bench/results/media-relay-*.json with the machine and its load.
 */
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { describeMachine } from '../api/machine.js';
import { describeRevision } from '../api/revision.js';
import { generateDtlsCertificate } from '../../src/media/dtls/dtls-certificate.js';
import {
  handshakeCase,
  memoryCase,
  mixCase,
  relayCase,
  type HandshakeCase,
  type MixCase,
  type RelayCase,
  type Timing,
} from './relay-cases.js';
import { RelayLegs, type LegKind } from './relay-legs.js';
import { compareLegs, legComparisonLines } from './relay-legs-report.js';
import { Gateway } from './relay-gateway.js';
import { LoadProcess } from './relay-load-client.js';
import { reportRelayRun, summarize, type MediaRelayRun, type RelayPlan } from './relay-report.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
/** Sockets the load process sends from, and as many it only receives on. */
const LOAD_SOCKETS = 4;
/** Spare port pairs in each worker's range, past the sessions a case opens. */
const SPARE_PAIRS = 200;

const sharedCores = (cores: number) =>
  `the machine has ${cores} cores, shared by the worker, its GC helper threads, the load ` +
  "process (generator and sinks) and the kernel's loopback work, and by anything else running " +
  'on it (see the load average): measured rates are what this box sustained with all of that ' +
  'running, not what a worker on a core of its own would';

const NOTES = [
  'derived figures divide a fully busy core (1e6 µs/s) by the worker cpu measured per packet ' +
    'or per call-second; they assume cost per packet stays flat up to saturation',
  "worker cpu is the gateway process's user+system time less its main thread's (which only " +
    "holds the pool), so V8 helper threads doing the worker's GC count; thread cpu is the " +
    'worker thread alone (from /proc/self/task, 10 ms ticks); preempt/s is how often the worker ' +
    'thread was switched out while it could still run, a sign of cores shared with other work',
  'relayed/s is counted at the sinks (RTP audio packets reaching the load process) over the ' +
    'window; loss, legs in, legs out and sinks are totals over the whole step, load start to ' +
    "drained, legs in and out from the legs' sessionStats packetsReceived and packetsSent",
  'a mix leg sends 50 packets/s whether or not it hears anything, so "leg sent/s" is counted ' +
    'at the sinks; gaps are per leg between packets arriving at the sinks',
  "memory rss is process-wide (main thread included); heapUsed is the worker isolate's; " +
    'GC cannot be forced in the worker, so heap figures carry young-generation noise',
];

function readPlan(): RelayPlan {
  const { values } = parseArgs({
    options: {
      pairs: { type: 'string', default: '500' },
      'small-pairs': { type: 'string', default: '50' },
      rates: { type: 'string', default: '20000,50000,80000,100000,120000' },
      'mix-pairs': { type: 'string', default: '200,300,500' },
      sessions: { type: 'string', default: '1000' },
      'idle-ms': { type: 'string', default: '2000' },
      'warmup-ms': { type: 'string', default: '1000' },
      'window-ms': { type: 'string', default: '4000' },
      'mix-window-ms': { type: 'string', default: '6000' },
      'settle-ms': { type: 'string', default: '2000' },
      legs: { type: 'string', default: 'pcmu,webrtc' },
      handshakes: { type: 'string', default: '200' },
      'handshake-concurrency': { type: 'string', default: '4' },
    },
  });
  const legs = values.legs.split(',').map((leg) => leg.trim());
  if (legs[0] !== 'pcmu' || legs.some((leg) => leg !== 'pcmu' && leg !== 'webrtc'))
    throw new Error(`Expected --legs pcmu or pcmu,webrtc but received ${values.legs}`);
  const list = (text: string) => text.split(',').map(Number);
  const plan: Omit<RelayPlan, 'legs'> = {
    relayPairs: [Number(values['small-pairs']), Number(values.pairs)],
    relayRates: list(values.rates),
    mixPairs: list(values['mix-pairs']),
    memorySessions: Number(values.sessions),
    idleMs: Number(values['idle-ms']),
    warmupMs: Number(values['warmup-ms']),
    windowMs: Number(values['window-ms']),
    mixWindowMs: Number(values['mix-window-ms']),
    settleMs: Number(values['settle-ms']),
    handshakes: Number(values.handshakes),
    handshakeConcurrency: Number(values['handshake-concurrency']),
  };
  for (const [name, value] of Object.entries(plan)) {
    for (const n of [value].flat()) {
      if (!Number.isInteger(n) || n < 1) {
        throw new Error(`Expected positive integers for ${name} but received ${value}`);
      }
    }
  }
  return { ...plan, legs: [...new Set(legs)] as LegKind[] };
}

/** An even base port in 20000-60000 with room for both workers' ranges above it. */
function portRanges(plan: RelayPlan): Array<{ min: number; max: number }> {
  const sessions = Math.max(...plan.relayPairs, ...plan.mixPairs) * 2;
  const sizes = [sessions, plan.memorySessions].map((s) => 2 * (s + SPARE_PAIRS));
  const span = sizes[0]! + sizes[1]!;
  const base = 20000 + 2 * Math.floor((Math.random() * (40000 - span)) / 2);
  return [
    { min: base, max: base + sizes[0]! - 1 },
    { min: base + sizes[0]!, max: base + span - 1 },
  ];
}

async function main(): Promise<void> {
  const plan = readPlan();
  const machine = describeMachine();
  const date = new Date().toISOString();
  const timing: Timing = plan;
  const [bridgePorts, memoryPorts] = portRanges(plan);
  const load = LoadProcess.start();
  try {
    const opened = await load.request({ type: 'open', sockets: LOAD_SOCKETS });
    const { sinkPorts } = opened;
    // Memory first, on a fresh worker in a process that has not yet run any calls.
    console.log(`memory: ${plan.memorySessions} sessions`);
    const fresh = await Gateway.start(memoryPorts!);
    const memory = await memoryCase(fresh, load, sinkPorts, plan.memorySessions, plan.settleMs);
    const warnings = [...fresh.warnings];
    await fresh.close();
    const gateway = await Gateway.start(bridgePorts!, {
      certificate: generateDtlsCertificate('bench-relay'),
      handshakeTimeoutMs: 5000,
    });
    const relay: RelayCase[] = [];
    const mix: MixCase[] = [];
    const handshakes: HandshakeCase[] = [];
    for (const kind of plan.legs) {
      const legs = new RelayLegs(kind, gateway, load, sinkPorts, opened.webrtc);
      for (const pairs of plan.relayPairs) {
        console.log(`relay: ${pairs} pairs, ${kind} legs`);
        relay.push(await relayCase(gateway, load, legs, pairs, plan.relayRates, timing));
      }
      for (const pairs of plan.mixPairs) {
        console.log(`mix: ${pairs} pairs, ${kind} legs`);
        const mixTiming = { ...timing, windowMs: plan.mixWindowMs };
        mix.push(await mixCase(gateway, load, legs, pairs, mixTiming));
        console.log(`relay at a call's rate: ${pairs} pairs, ${kind} legs`);
        mix.push(await mixCase(gateway, load, legs, pairs, mixTiming, 'relay'));
      }
      if (plan.legs.length > 1) {
        console.log(`legs brought up: ${plan.handshakes} ${kind} legs`);
        handshakes.push(
          await handshakeCase(gateway, legs, plan.handshakes, plan.handshakeConcurrency),
        );
      }
    }
    const bridgeThreads = gateway.threadCpu();
    warnings.push(...gateway.warnings);
    await gateway.close();
    const run: MediaRelayRun = {
      benchmark: 'media-relay',
      date,
      machine,
      revision: describeRevision(ROOT),
      loadAverageAfter: loadavg().map((n) => Math.round(n * 100) / 100),
      plan,
      portRanges: { bridges: bridgePorts!, memory: memoryPorts! },
      workerThreadsCpuSeconds: bridgeThreads,
      relay,
      mix,
      handshakes,
      memory,
      summary: summarize(relay, mix, memory),
      webrtcAgainstPcmu: compareLegs(relay, mix, handshakes),
      warnings,
      notes: [sharedCores(machine.cores), ...NOTES],
    };
    for (const file of reportRelayRun(run, RESULTS_DIR)) console.log(`wrote ${file}`);
    for (const line of legComparisonLines(run.webrtcAgainstPcmu)) console.log(line);
  } finally {
    await load.close();
  }
}

await main();
