import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSippUas } from '../../test/support/sipp.js';
import type { AppServer } from './app-server.js';
import { placeCalls } from './call-placer.js';
import type { Stalls, StallWatch } from '../api/stall-watch.js';
import type { CpuSampler, CpuShares } from './cpu-sampler.js';
import type { CallsGateway } from './gateway.js';
import type { HealthProbe } from './health-probe.js';
import type { InviteTap } from './invite-tap.js';
import type { WireCapture } from './wire-capture.js';
import { percentiles, tally } from './stats.js';

export const NORMAL_HANGUP = 4000;

/** One rate of outbound calls placed through the REST API. */
export interface OutboundStep {
  /** Calls offered per second. */
  rate: number;
  seconds: number;
  attempted: number;
  /** Calls the generator actually started per second (below `rate` if it fell behind). */
  sentPerSecond: number;
  /** Hangup callbacks with HangupCauseCode 4000. */
  completed: number;
  /** Completed calls per second of the sending window. */
  completedPerSecond: number;
  failed: number;
  /** Failed calls by kind: `http <status>`, `cause <code> <name>`, `no hangup callback`. */
  failures: Record<string, number>;
  /**
   * Post-dial delay, ms: on the `wire` (the POST's and the INVITE's capture times on
   * loopback), or by the `generator`'s clock when no capture could run.
   */
  pddMs: { p50: number | null; p99: number | null; max: number | null; measured: number };
  pddOn: 'wire' | 'generator';
  /**
   * POST Call/ written to the INVITE read by the tap in front of SIPp, both by the generator's
   * clock, ms: the wire's delay plus however long the generator's process waited to run.
   */
  generatorPddMs: { p50: number | null; p99: number | null; max: number | null; measured: number };
  /** POST Call/ written to its 201 read, ms. */
  apiMs: { p50: number | null; p99: number | null; max: number | null };
  /** POST Call/ written to the hangup callback, ms: the length of a whole call. */
  callMs: { p50: number | null; p99: number | null; max: number | null };
  /** INVITEs the gateway sent again (no answer within T1). */
  inviteRetransmissions: number;
  sipp: { successful: number; failed: number; firstErrors: string[] };
  cpu: CpuShares;
  /** GET /health answer times while calls were being placed, ms: the gateway's event-loop lag. */
  gatewayHealthMs: { p50: number | null; p99: number | null; max: number | null };
  /** Lines the gateway logged (warn and above) during the step; null for a gateway elsewhere. */
  gatewayLogLines: number | null;
  /** Moments the whole machine stood still while calls were being placed. */
  machineStalls: Stalls;
}

export interface OutboundContext {
  gateway: CallsGateway;
  app: AppServer;
  tap: InviteTap;
  /** Where the tap and the RTP sink listen: the address the gateway sends the calls to. */
  listenHost: string;
  /** The carrier's SIPp scenario (sipp-on-host.ts); the carrier itself is on loopback. */
  carrierScenario: string;
  rtpPort: number;
  sampler: CpuSampler;
  health: HealthProbe;
  stalls: StallWatch;
  /** The loopback capture that times each call on the wire; null when none could run. */
  wire: WireCapture | null;
}

/** How long to wait for the last calls' hangup callbacks after the last POST. */
const DRAIN_MS = 20_000;

export async function runOutboundStep(
  context: OutboundContext,
  rate: number,
  seconds: number,
  firstN: number,
): Promise<OutboundStep> {
  const { gateway, app, tap } = context;
  const carrier = await startSippUas({
    scenario: context.carrierScenario,
    variables: { rtp_port: String(context.rtpPort) },
  });
  tap.setTarget(carrier.port);
  const hangupsBefore = app.hangups.length;
  const logsBefore = gateway.log?.lineCount() ?? 0;
  const retransBefore = tap.retransmissions;
  const cpuBefore = await context.sampler.begin();
  context.health.take();
  context.stalls.take();
  const { calls, sendSeconds } = await placeCalls({
    baseUrl: gateway.baseUrl,
    authId: gateway.authId,
    authorization: gateway.authorization,
    to: `sip:bench@${context.listenHost}:${tap.port}`,
    answerUrl: `${app.baseUrl}/outbound-answer`,
    hangupUrl: `${app.baseUrl}/hangup`,
    rate,
    seconds,
    firstN,
  });
  const cpu = context.sampler.shares(cpuBefore, await context.sampler.read());
  const gatewayHealthMs = context.health.take();
  const machineStalls = context.stalls.take();
  const fired = new Set(calls.filter((c) => c.status === 201).map((c) => c.requestUuid));
  const arrived = () =>
    app.hangups.slice(hangupsBefore).filter((h) => fired.has(h.requestUuid)).length;
  const deadline = performance.now() + DRAIN_MS;
  while (arrived() < fired.size && performance.now() < deadline) await sleep(100);
  const sipp = await carrier.stop();

  const hangups = new Map(
    app.hangups
      .slice(hangupsBefore)
      .filter((h) => fired.has(h.requestUuid))
      .map((h) => [h.requestUuid, h]),
  );
  const kinds: string[] = [];
  let completed = 0;
  for (const call of calls) {
    if (call.status !== 201 || call.requestUuid === null) {
      kinds.push(call.status === 0 ? `http error ${call.error ?? ''}` : `http ${call.status}`);
      continue;
    }
    const hangup = hangups.get(call.requestUuid);
    if (!hangup) kinds.push('no hangup callback');
    else if (hangup.causeCode !== NORMAL_HANGUP)
      kinds.push(`cause ${hangup.causeCode} ${hangup.causeName}`);
    else completed++;
  }
  const generatorPdd = calls
    .map((c) => (tap.arrivals.get(c.n) ?? NaN) - c.sentAt)
    .filter((ms) => Number.isFinite(ms));
  const onWire = context.wire?.postDialDelays();
  const wirePdd = onWire && calls.flatMap((c) => onWire.get(c.n) ?? []);
  const api = calls.filter((c) => c.status !== 0).map((c) => c.respondedAt - c.sentAt);
  const lengths = calls.flatMap((c) => {
    const hangup = c.requestUuid === null ? undefined : hangups.get(c.requestUuid);
    return hangup ? [hangup.receivedAt - c.sentAt] : [];
  });
  return {
    rate,
    seconds,
    attempted: calls.length,
    sentPerSecond: Math.round(calls.length / sendSeconds),
    completed,
    completedPerSecond: Math.round(completed / sendSeconds),
    failed: kinds.length,
    failures: tally(kinds),
    pddMs: wirePdd
      ? { ...percentiles(wirePdd), measured: wirePdd.length }
      : { ...percentiles(generatorPdd), measured: generatorPdd.length },
    pddOn: wirePdd ? 'wire' : 'generator',
    generatorPddMs: { ...percentiles(generatorPdd), measured: generatorPdd.length },
    apiMs: percentiles(api),
    callMs: percentiles(lengths),
    inviteRetransmissions: tap.retransmissions - retransBefore,
    sipp: {
      successful: sipp.successful,
      failed: sipp.failed,
      firstErrors: sipp.errors.slice(0, 10),
    },
    cpu,
    gatewayHealthMs,
    gatewayLogLines: gateway.log ? gateway.log.lineCount() - logsBefore : null,
    machineStalls,
  };
}
