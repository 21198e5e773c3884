import type { SocketFloor } from './socket-floor.js';
import type { StreamStep } from './stream-step.js';

export const GOAL_STREAMS = 1000;
export const GOAL_P99_MS = 2;
/** A WebRTC leg's worker CPU against a plain PCMU leg's, at most. */
export const GOAL_RATIO = 2;

const figure = (value: number | null | undefined) => value ?? '-';
const failuresText = (failures: Record<string, number>) =>
  Object.entries(failures)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');

/** Gateway RSS growth per stream from the 1-stream step (or the first step) to this one, KiB. */
export function memoryPerStreamKiB(step: StreamStep, base: StreamStep | undefined): number | null {
  if (!base || step.established <= base.established) return null;
  const grown = step.memory.gatewayRssMiB - base.memory.gatewayRssMiB;
  return Math.round((grown * 1024) / (step.established - base.established));
}

export function printSteps(steps: StreamStep[]): void {
  if (steps.length === 0) return;
  console.log(
    'bidirectional streams (caller RTP -> gateway -> echo bot -> playAudio -> gateway -> caller)',
  );
  const base = steps[0];
  console.table(
    steps.map((s) => ({
      streams: s.streams,
      leg: s.leg,
      up: s.streamsStarted,
      'in p50': figure(s.inboundLatencyMs?.p50Ms),
      'in p99': figure(s.inboundLatencyMs?.p99Ms),
      'in<=2ms %': figure(s.inboundLatencyMs?.withinPercent),
      'out p50': figure(s.playoutLatencyMs?.p50Ms),
      'out p99': figure(s.playoutLatencyMs?.p99Ms),
      'out<=2ms %': figure(s.playoutLatencyMs?.withinPercent),
      'rtt p50': figure(s.roundTripMs.p50),
      'rtt p99': figure(s.roundTripMs.p99),
      sent: s.frames.sent,
      lost: s.frames.lost,
      'lost %': s.frames.lostPercent,
      'gw cpu%': s.cpu.gatewayPercent,
      'cpu%/str': figure(s.cpu.gatewayPercentPerStream),
      'sys%/str': figure(s.cpu.gatewaySystemPercentPerStream),
      'KiB/str': figure(memoryPerStreamKiB(s, base)),
      'bench%': s.cpu.benchPercent,
      'tick p99': figure(s.generator.tickLateMs.p99),
      'stall max': s.machineStalls.longestMs,
      failures: failuresText(s.failures),
    })),
  );
  console.log(
    'in/out: gateway-added latency each way from its histograms, ms; rtt: caller to caller, ms; ' +
      "sys%/str: the kernel's part of cpu%/str; tick p99: how late the callers' 20 ms clock " +
      'fired, ms; stall max: the longest moment the whole machine stood still, ms',
  );
}

const ratio = (a: number | null | undefined, b: number | null | undefined) =>
  a !== null && a !== undefined && b ? Math.round((a / b) * 100) / 100 : null;

/** The worker side of the gateway (every thread but the main one) per stream, % of a core. */
const workerPerStream = (s: StreamStep) =>
  s.cpu.gatewayOtherThreadsPercent === null || s.established === 0
    ? null
    : Math.round((s.cpu.gatewayOtherThreadsPercent / s.established) * 1000) / 1000;

/**
 * Each number of streams with plain PCMU legs and with WebRTC legs (DTLS-SRTP, Opus), side by
 * side: the gateway's CPU per stream, its threads other than the main one (the media worker,
 * and the GC helpers working for it), the ratios, the latency each way, and the WebRTC
 * handshake from the 200 OK.
 */
export function printLegs(steps: StreamStep[]): void {
  const rows = steps.filter((s) => s.leg === 'webrtc');
  if (rows.length === 0) return;
  const rounds = new Set(steps.map((s) => s.round)).size;
  console.log(
    `WebRTC legs (ICE-lite, DTLS-SRTP, Opus) against plain PCMU, the same streams in the same run (goal: at most ${GOAL_RATIO}x the worker CPU, p99 at most ${GOAL_P99_MS} ms each way)`,
  );
  const ratios = new Map<number, number[]>();
  console.table(
    rows.map((webrtc) => {
      const plain = steps.find(
        (s) => s.leg === 'pcmu' && s.streams === webrtc.streams && s.round === webrtc.round,
      );
      const worker = [plain, webrtc].map((s) => (s ? workerPerStream(s) : null));
      const total = [plain, webrtc].map((s) => s?.cpu.gatewayPercentPerStream);
      const workerRatio = ratio(worker[1], worker[0]);
      if (workerRatio !== null)
        ratios.set(webrtc.streams, [...(ratios.get(webrtc.streams) ?? []), workerRatio]);
      const p99 = (s: StreamStep | undefined) =>
        `${figure(s?.inboundLatencyMs?.p99Ms)} / ${figure(s?.playoutLatencyMs?.p99Ms)}`;
      return {
        ...(rounds > 1 && { round: webrtc.round }),
        streams: webrtc.streams,
        'worker%/str pcmu': figure(worker[0]),
        'worker%/str webrtc': figure(worker[1]),
        'worker ratio': figure(workerRatio),
        'gw%/str pcmu': figure(total[0]),
        'gw%/str webrtc': figure(total[1]),
        'gw ratio': figure(ratio(total[1], total[0])),
        'p99 in/out pcmu': p99(plain),
        'p99 in/out webrtc': p99(webrtc),
        'lost % pcmu/webrtc': `${figure(plain?.frames.lostPercent)} / ${webrtc.frames.lostPercent}`,
        'dtls p50/p99': `${figure(webrtc.handshake?.connectedMs.p50)} / ${figure(webrtc.handshake?.connectedMs.p99)}`,
        '1st pkt p50/p99': `${figure(webrtc.handshake?.firstPacketMs.p50)} / ${figure(webrtc.handshake?.firstPacketMs.p99)}`,
      };
    }),
  );
  console.log(
    "worker%/str: the gateway's threads other than the main one, % of a core per stream; dtls and 1st pkt: ms from the 200 OK at the caller to DTLS done and to the gateway's first SRTP packet",
  );
  const marginal = new Map<string, number[]>();
  for (let round = 1; round <= rounds; round++) {
    for (const [span, value] of printMarginal(steps.filter((s) => s.round === round)))
      marginal.set(span, [...(marginal.get(span) ?? []), value]);
  }
  if (rounds < 2) return;
  for (const [streams, values] of ratios)
    console.log(
      `median of ${values.length} rounds at ${streams} streams: ${figure(median(values))}x the worker CPU of PCMU (${values.map((v) => figure(v)).join(', ')})`,
    );
  for (const [span, values] of marginal)
    console.log(
      `median of ${values.length} rounds for one stream more, ${span}: ${figure(median(values))}x (${values.map((v) => figure(v)).join(', ')})`,
    );
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const middle = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return Math.round(middle * 100) / 100;
}

/**
 * What one more stream costs the worker between two steps, PCMU and WebRTC: the per-stream
 * figures above carry the worker's fixed cost (its clock, its wake-ups), which more streams
 * share, so the ratio per stream falls toward this one as the streams grow. Returns the ratio
 * of each span printed ("from 20 to 60").
 */
function printMarginal(steps: StreamStep[]): Map<string, number> {
  const ratios = new Map<string, number>();
  const workerPercent = (leg: string, streams: number) =>
    steps.find((s) => s.leg === leg && s.streams === streams)?.cpu.gatewayOtherThreadsPercent ??
    null;
  const counts = [...new Set(steps.filter((s) => s.leg === 'webrtc').map((s) => s.streams))].sort(
    (a, b) => a - b,
  );
  for (let i = 1; i < counts.length; i++) {
    const [from, to] = [counts[i - 1]!, counts[i]!];
    const added = (leg: string) => {
      const [a, b] = [workerPercent(leg, from), workerPercent(leg, to)];
      return a === null || b === null ? null : Math.round(((b - a) / (to - from)) * 1000) / 1000;
    };
    const [pcmu, webrtc] = [added('pcmu'), added('webrtc')];
    if (pcmu === null || webrtc === null) continue;
    const marginal = ratio(webrtc, pcmu);
    if (marginal !== null) ratios.set(`from ${from} to ${to}`, marginal);
    console.log(
      `one stream more, from ${from} to ${to}: worker ${pcmu} % of a core PCMU, ${webrtc} % WebRTC (${figure(marginal)}x)`,
    );
  }
  return ratios;
}

/** The gateway's CPU per stream beside the socket floor's relays at the same number of streams. */
export function printSocketFloor(
  steps: StreamStep[],
  floor: { steps: SocketFloor[] } | { skipped: string },
): void {
  if (!('steps' in floor) || floor.steps.length === 0) return;
  console.log(
    "the same streams through the socket floor, relays doing only their socket work (a datagram in, a message out, a message in, a datagram out): C (socket-floor.c) and Node with the gateway's datagram reader (socket-floor-node.ts)",
  );
  console.table(
    steps.flatMap((step) => {
      const c = floor.steps.find((f) => f.streams === step.streams && f.relay === 'c');
      const node = floor.steps.find((f) => f.streams === step.streams && f.relay === 'node');
      if (!c && !node) return [];
      const gateway = step.cpu.gatewayPercentPerStream;
      return [
        {
          streams: step.streams,
          leg: step.leg,
          'gw cpu%/str': figure(gateway),
          'gw sys%/str': figure(step.cpu.gatewaySystemPercentPerStream),
          'C cpu%/str': figure(c?.cpuPercentPerStream),
          'C sys%/str': figure(c?.systemPercentPerStream),
          'Node cpu%/str': figure(node?.cpuPercentPerStream),
          'Node sys%/str': figure(node?.systemPercentPerStream),
          'gw/C': figure(ratio(gateway, c?.cpuPercentPerStream)),
          'gw/Node': figure(ratio(gateway, node?.cpuPercentPerStream)),
          'back %': [c, node]
            .map((f) => (f ? Math.round((f.received / Math.max(1, f.sent)) * 1000) / 10 : '-'))
            .join(' / '),
        },
      ];
    }),
  );
}

/** Plain sentences: where the gateway stands against the goal, and what limited the run. */
export function verdict(
  steps: StreamStep[],
  cores: number,
  stoppedBecause: string | null,
  where = `${cores} cores shared by the gateway, the callers and the echo bot`,
): string[] {
  const lines: string[] = [];
  const noHistograms = steps.every((s) => !s.inboundLatencyMs && !s.playoutLatencyMs);
  if (noHistograms)
    lines.push(
      'gateway latency: the gateway does not export voxgate_stream_inbound_latency_seconds and voxgate_stream_playout_latency_seconds yet: reported as null',
    );
  for (const s of steps) {
    const parts = [
      `${s.streams} streams (${s.leg}): ${s.streamsStarted} up`,
      `inbound p50/p99 ${figure(s.inboundLatencyMs?.p50Ms)}/${figure(s.inboundLatencyMs?.p99Ms)} ms (${figure(s.inboundLatencyMs?.withinPercent)}% within ${GOAL_P99_MS} ms)`,
      `playout p50/p99 ${figure(s.playoutLatencyMs?.p50Ms)}/${figure(s.playoutLatencyMs?.p99Ms)} ms (${figure(s.playoutLatencyMs?.withinPercent)}% within ${GOAL_P99_MS} ms)`,
      `round trip p50/p99 ${figure(s.roundTripMs.p50)}/${figure(s.roundTripMs.p99)} ms`,
      `${s.frames.lost} of ${s.frames.sent} frames lost (${s.frames.lostToBot} on the way to the bot, ${s.frames.lostBack} on the way back)`,
      `gateway CPU ${s.cpu.gatewayPercent}% of a core`,
    ];
    if (s.generator.behind)
      parts.push(
        `the generator was behind (tick p99 ${s.generator.tickLateMs.p99} ms, ${s.generator.skippedTicks} ticks skipped): figures at this step are bounded by the bench`,
      );
    lines.push(parts.join(', '));
  }
  if (stoppedBecause) lines.push(`stopped climbing: ${stoppedBecause}`);
  const goalStep = steps.find((s) => s.streams >= GOAL_STREAMS);
  const within = (l: StreamStep['inboundLatencyMs']) =>
    l !== null && l.p99Ms !== null && !l.p99AboveHighestBucket && l.p99Ms <= GOAL_P99_MS;
  const met =
    goalStep !== undefined &&
    goalStep.streamsStarted >= GOAL_STREAMS &&
    goalStep.frames.lost === 0 &&
    Object.keys(goalStep.failures).length === 0 &&
    within(goalStep.inboundLatencyMs) &&
    within(goalStep.playoutLatencyMs);
  const status = met
    ? 'met'
    : goalStep === undefined
      ? `not measured (no step reached ${GOAL_STREAMS} streams)`
      : 'not met';
  lines.push(
    `goal (${GOAL_STREAMS} streams, gateway-added p99 <= ${GOAL_P99_MS} ms each way, no frame lost): ${status} on ${where}`,
  );
  return lines;
}
