import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Stalls, StallWatch } from '../api/stall-watch.js';
import type { CpuSampler } from '../calls/cpu-sampler.js';
import type { CallsGateway } from '../calls/gateway.js';
import { percentiles } from '../calls/stats.js';
import type { EchoBot, EchoBotCounters } from './echo-bot.js';
import {
  latencyBetween,
  readGatewayMetrics,
  udpDrops,
  type LatencyFigures,
} from './gateway-metrics.js';
import { GOAL_P99_MS } from './report.js';
import type { CallerMedia, RtpCaller } from './rtp-callers.js';
import type { Dialog, SipUac } from './sip-uac.js';
import type { WebrtcCallerWire, WebrtcCallers } from './webrtc-caller.js';

/** How the callers' legs reach the gateway: plain RTP with PCMU, or WebRTC (SRTP, Opus). */
export type CallerLeg = 'pcmu' | 'webrtc';

/** One step: `streams` calls, each with a bidirectional stream to the echo bot. */
export interface StreamStep {
  streams: number;
  leg: CallerLeg;
  /** Which pass over the steps it was (`--rounds`), from 1. */
  round: number;
  /**
   * WebRTC only: from the 200 OK at the caller to DTLS done (its ICE check sent first) and to
   * the first SRTP packet from the gateway, ms; and what the callers could not unprotect.
   */
  handshake: {
    connectedMs: ReturnType<typeof percentiles>;
    firstPacketMs: ReturnType<typeof percentiles>;
    srtpRefused: number;
  } | null;
  /** Calls answered (200, ACK), and streams the bot saw start. */
  established: number;
  streamsStarted: number;
  /** Why calls or streams did not come up, or ended early, by reason. */
  failures: Record<string, number>;
  setupSeconds: number;
  answerMs: { p50: number | null; p99: number | null; max: number | null };
  seconds: number;
  frames: {
    sent: number;
    /** Media events with the callers' audio the bot received. */
    atBot: number;
    /** Numbered frames that came back to their caller, once each. */
    echoed: number;
    lostToBot: number;
    lostBack: number;
    lost: number;
    lostPercent: number;
    /** Every media event the bot received in the window, silence included. */
    mediaEventsAtBot: number;
    botSequenceGaps: number;
    botChunkGaps: number;
    botOutOfOrder: number;
    echoGaps: number;
    duplicateEchoes: number;
    alteredFrames: number;
    /** UDP datagrams the kernel dropped on this machine over the window (all sockets). */
    udpReceiveBufferErrors: number;
    udpInErrors: number;
  };
  /** From the gateway's histograms over the window; null when it does not export them. */
  inboundLatencyMs: LatencyFigures | null;
  playoutLatencyMs: LatencyFigures | null;
  /** At the caller: a frame sent to the same frame back, through the gateway and the bot. */
  roundTripMs: { p50: number | null; p99: number | null; max: number | null; samples: number };
  generator: {
    ticks: number;
    tickLateMs: { p50: number | null; p99: number | null; max: number | null };
    skippedTicks: number;
    /** Share of time each bench thread was busy over the window, %. */
    callersLoopPercent: number;
    botLoopPercent: number;
    botMaxBufferedBytes: number;
    /** Set when the generator, not the gateway, may have been the bottleneck. */
    behind: boolean;
  };
  cpu: {
    /** NaN (null in the results) when the gateway's CPU could not be read. */
    gatewayPercent: number;
    /** The gateway's threads: null for a gateway elsewhere (its /metrics has no split). */
    gatewayMainPercent: number | null;
    gatewayOtherThreadsPercent: number | null;
    gatewayPercentPerStream: number | null;
    /**
     * The kernel's part of gatewayPercent: its socket work, and on loopback the delivery of
     * what it sends into the callers' and the bot's sockets. NaN (null) when unknown.
     */
    gatewaySystemPercent: number;
    gatewaySystemPercentPerStream: number | null;
    benchPercent: number;
    machinePercent: number;
    othersPercent: number;
  };
  /** From /proc, or from /metrics for a gateway elsewhere; NaN (null) when unknown. */
  memory: { gatewayIdleRssMiB: number; gatewayRssMiB: number };
  /** Moments the whole machine stood still during the window. */
  machineStalls: Stalls;
  hangup: { byeOk: number; byeFailed: number; mediaSessionsAfter: number | null };
  /** Lines the gateway logged during the step; null for a gateway elsewhere. */
  gatewayLogLines: number | null;
}

export interface StepContext {
  gateway: CallsGateway;
  uac: SipUac;
  media: CallerMedia;
  bot: EchoBot;
  sampler: CpuSampler;
  stalls: StallWatch;
  number: string;
  /** Calls set up per second. */
  rampRate: number;
  leg: CallerLeg;
  webrtc: WebrtcCallers;
}

const INVITE_TIMEOUT_MS = 15_000;
const DTLS_TIMEOUT_MS = 10_000;
const STREAM_START_TIMEOUT_MS = 10_000;
const SETTLE_MS = 1000;
const DRAIN_MS = 1000;
const SESSIONS_TIMEOUT_MS = 15_000;
/** Generator tick lateness (p99, ms) above which its own timing is suspect. */
const GENERATOR_LATE_MS = 5;

interface Call {
  caller: RtpCaller;
  dialog: Dialog;
}

const diff = (a: EchoBotCounters, b: EchoBotCounters, key: keyof EchoBotCounters) =>
  a[key] - b[key];

/** A share of a core per stream, to a thousandth of a percent; null without streams. */
export function perStream(percent: number, streams: number): number | null {
  return streams > 0 ? Math.round((percent / streams) * 1000) / 1000 : null;
}

function count(failures: Record<string, number>, reason: string, n = 1): void {
  if (n > 0) failures[reason] = (failures[reason] ?? 0) + n;
}

async function placeCalls(
  context: StepContext,
  streams: number,
  failures: Record<string, number>,
): Promise<Call[]> {
  const calls: Call[] = [];
  const started = performance.now();
  const invites: Promise<void>[] = [];
  for (let i = 0; i < streams; i++) {
    const wait = started + (i * 1000) / context.rampRate - performance.now();
    if (wait > 1) await sleep(wait);
    invites.push(
      (async () => {
        const webrtc = context.leg === 'webrtc';
        const caller = await context.media.add(webrtc ? context.webrtc.wire : undefined);
        const wire = webrtc ? (caller.wire as WebrtcCallerWire) : null;
        const result = await context.uac.invite(
          context.number,
          caller.port,
          INVITE_TIMEOUT_MS,
          wire?.offer,
        );
        if (!result.ok) {
          count(failures, `call not answered: ${result.reason}`);
          context.media.remove(caller);
          return;
        }
        caller.remote = { host: result.dialog.remoteRtpHost, port: result.dialog.remoteRtpPort };
        calls.push({ caller, dialog: result.dialog });
        if (wire === null) return;
        if (!result.dialog.webrtc) return count(failures, 'answered without WebRTC');
        await Promise.race([
          wire.connect(result.dialog.remoteRtpPort, result.dialog.webrtc),
          sleep(DTLS_TIMEOUT_MS).then(() => Promise.reject(new Error('timed out'))),
        ]).catch((error: Error) => count(failures, `DTLS: ${error.message}`));
      })(),
    );
  }
  await Promise.all(invites);
  return calls;
}

function handshakeTimes(calls: Call[], webrtc: WebrtcCallers): StreamStep['handshake'] {
  const since = (call: Call, at: number | null) =>
    at === null ? [] : [Math.round((at - call.dialog.answeredAt) * 100) / 100];
  const wires = calls.map((call) => [call, call.caller.wire as WebrtcCallerWire] as const);
  return {
    connectedMs: percentiles(wires.flatMap(([call, wire]) => since(call, wire.connectedAt))),
    firstPacketMs: percentiles(wires.flatMap(([call, wire]) => since(call, wire.firstMediaAt))),
    srtpRefused: webrtc.refused,
  };
}

async function waitFor(
  read: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 100,
): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await read()) return true;
    if (performance.now() > deadline) return false;
    await sleep(everyMs);
  }
}

export async function runStreamStep(
  context: StepContext,
  streams: number,
  seconds: number,
): Promise<Omit<StreamStep, 'round'>> {
  const { gateway, media, bot, sampler } = context;
  const failures: Record<string, number> = {};
  context.webrtc.refused = 0;
  context.webrtc.early = 0;
  const logsBefore = gateway.log?.lineCount() ?? 0;
  const gatewayIdleRssMiB = await gateway.usage.residentMiB();
  const botStart = await bot.read();
  media.mode = 'silence';
  media.start();
  const setupStarted = performance.now();
  const calls = await placeCalls(context, streams, failures);
  const setupSeconds = Math.round((performance.now() - setupStarted) / 100) / 10;
  let botNow = botStart;
  await waitFor(async () => {
    botNow = await bot.read();
    return botNow.starts - botStart.starts >= calls.length;
  }, STREAM_START_TIMEOUT_MS);
  const streamsStarted = botNow.starts - botStart.starts;
  count(failures, 'stream not started', calls.length - streamsStarted);
  await sleep(SETTLE_MS);

  // The window: every caller sends numbered audio, the bot echoes it.
  media.take();
  const metricsBefore = await readGatewayMetrics(gateway);
  const botBefore = await bot.read();
  const udpBefore = udpDrops();
  const cpuBefore = await sampler.begin();
  context.stalls.take();
  const loopBefore: EventLoopUtilization = performance.eventLoopUtilization();
  media.mode = 'audio';
  await sleep(seconds * 1000);
  media.mode = 'off';
  const cpuAfter = await sampler.read();
  const machineStalls = context.stalls.take();
  const callersLoop = performance.eventLoopUtilization(loopBefore).utilization;
  const gatewayRssMiB = await gateway.usage.residentMiB();
  const metricsAfter = await readGatewayMetrics(gateway);
  const botEnd = await bot.read();
  await sleep(DRAIN_MS);
  const botAfter = await bot.read();
  const udpAfter = udpDrops();
  const taken = media.take();
  media.stop();
  count(failures, 'ended by the gateway', calls.filter((c) => c.dialog.endedByGateway).length);

  const byes = await Promise.all(calls.map((c) => context.uac.bye(c.dialog)));
  for (const call of calls) media.remove(call.caller);
  let mediaSessionsAfter: number | null = null;
  await waitFor(async () => {
    mediaSessionsAfter = (await readGatewayMetrics(gateway)).mediaSessions;
    return mediaSessionsAfter === null || mediaSessionsAfter === 0;
  }, SESSIONS_TIMEOUT_MS);
  await waitFor(async () => (await bot.read()).open === 0, 5000);

  const c = taken.counters;
  const atBot = diff(botAfter, botBefore, 'audioMedia');
  const lost = Math.max(0, c.audioFramesSent - c.echoedFrames);
  const shares = sampler.shares(cpuBefore, cpuAfter);
  // A gateway the bench started runs here, and /proc splits its threads; one elsewhere neither.
  const here = gateway.usage.from === 'proc';
  const thread = (name: string) => (here ? (shares.gatewayThreadsPercent[name] ?? 0) : null);
  const tickLateMs = percentiles(taken.tickLateMs);
  const roundTrip = percentiles(taken.roundTripMs);
  return {
    streams,
    leg: context.leg,
    handshake: context.leg === 'webrtc' ? handshakeTimes(calls, context.webrtc) : null,
    established: calls.length,
    streamsStarted,
    failures,
    setupSeconds,
    answerMs: percentiles(calls.map((call) => call.dialog.answerMs)),
    seconds,
    frames: {
      sent: c.audioFramesSent,
      atBot,
      echoed: c.echoedFrames,
      lostToBot: Math.max(0, c.audioFramesSent - atBot),
      lostBack: Math.max(0, atBot - c.echoedFrames),
      lost,
      lostPercent:
        c.audioFramesSent > 0 ? Math.round((lost / c.audioFramesSent) * 10_000) / 100 : 0,
      mediaEventsAtBot: diff(botAfter, botBefore, 'media'),
      botSequenceGaps: diff(botAfter, botBefore, 'sequenceGaps'),
      botChunkGaps: diff(botAfter, botBefore, 'chunkGaps'),
      botOutOfOrder: diff(botAfter, botBefore, 'outOfOrder'),
      echoGaps: c.echoGaps,
      duplicateEchoes: c.duplicateEchoes,
      alteredFrames: c.alteredFrames,
      udpReceiveBufferErrors: udpAfter.receiveBufferErrors - udpBefore.receiveBufferErrors,
      udpInErrors: udpAfter.inErrors - udpBefore.inErrors,
    },
    inboundLatencyMs: latencyBetween(metricsBefore.inbound, metricsAfter.inbound, GOAL_P99_MS),
    playoutLatencyMs: latencyBetween(metricsBefore.playout, metricsAfter.playout, GOAL_P99_MS),
    roundTripMs: { ...roundTrip, samples: taken.roundTripMs.length },
    generator: {
      ticks: taken.tickLateMs.length,
      tickLateMs,
      skippedTicks: taken.skippedTicks,
      callersLoopPercent: Math.round(callersLoop * 1000) / 10,
      botLoopPercent: botEnd.loopUtilization,
      botMaxBufferedBytes: botAfter.maxBufferedBytes,
      behind: taken.skippedTicks > 0 || (tickLateMs.p99 ?? 0) > GENERATOR_LATE_MS,
    },
    cpu: {
      gatewayPercent: shares.gatewayPercent,
      gatewayMainPercent: thread('main'),
      gatewayOtherThreadsPercent: thread('other threads'),
      gatewayPercentPerStream: perStream(shares.gatewayPercent, calls.length),
      gatewaySystemPercent: shares.gatewaySystemPercent,
      gatewaySystemPercentPerStream: perStream(shares.gatewaySystemPercent, calls.length),
      benchPercent: shares.benchPercent,
      machinePercent: shares.machinePercent,
      // The sampler's own figure also subtracts SIPp and an RTP sink, which this bench has not.
      othersPercent: Math.max(
        0,
        shares.machinePercent - (here ? shares.gatewayPercent : 0) - shares.benchPercent,
      ),
    },
    memory: { gatewayIdleRssMiB, gatewayRssMiB },
    machineStalls,
    hangup: {
      byeOk: byes.filter(Boolean).length,
      byeFailed: byes.filter((ok) => !ok).length,
      mediaSessionsAfter,
    },
    gatewayLogLines: gateway.log ? gateway.log.lineCount() - logsBefore : null,
  };
}
