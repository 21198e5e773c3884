import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { runSipp } from '../../test/support/sipp.js';
import type { AppServer } from './app-server.js';
import type { Stalls, StallWatch } from '../api/stall-watch.js';
import type { CpuSampler, CpuShares } from './cpu-sampler.js';
import type { CreatedResources } from './created-resources.js';
import type { CallsGateway } from './gateway.js';
import type { HealthProbe } from './health-probe.js';
import { NORMAL_HANGUP } from './outbound.js';
import { sippListenArgs } from './sipp-on-host.js';
import { tally } from './stats.js';

/** One rate of calls from SIPp to a number whose application answers them. */
export interface InboundStep {
  rate: number;
  seconds: number;
  attempted: number;
  /** SIPp's successful calls: INVITE, 200, ACK, its pause, BYE, 200. */
  successful: number;
  /** Successful calls per second of SIPp's run (calling and the last calls' end). */
  successfulPerSecond: number;
  failed: number;
  /** SIPp's failure counters that are not zero, and hangup callbacks of another cause. */
  failures: Record<string, number>;
  /** SIPp's mean INVITE to 200 time, ms (SIPp counts whole ms): includes the answer_url fetch. */
  meanAnswerMs: number | null;
  /** How many calls were answered within each bound, ms. */
  answerMsHistogram: Record<string, number>;
  retransmissions: number;
  hangupCallbacks: number;
  sippFirstErrors: string[];
  cpu: CpuShares;
  /** GET /health answer times while calls were being placed, ms: the gateway's event-loop lag. */
  gatewayHealthMs: { p50: number | null; p99: number | null; max: number | null };
  /** Lines the gateway logged during the step; null for a gateway elsewhere. */
  gatewayLogLines: number | null;
  /** Moments the whole machine stood still while SIPp was calling. */
  machineStalls: Stalls;
}

export interface InboundContext {
  gateway: CallsGateway;
  app: AppServer;
  sampler: CpuSampler;
  health: HealthProbe;
  stalls: StallWatch;
  number: string;
  /** SIPp's pause between the ACK and its BYE, ms. */
  holdMs: number;
  /** Where SIPp binds: its SIP and media addresses. */
  listenHost: string;
}

/** How long to wait for the hangup callbacks after SIPp ended. */
const DRAIN_MS = 10_000;

/**
 * Makes an application answering with `answerUrl` and a number that runs it; each is noted in
 * `created`, when given, as soon as it exists.
 */
export async function addInboundNumber(
  gateway: CallsGateway,
  number: string,
  answerUrl: string,
  hangupUrl: string,
  created?: CreatedResources,
): Promise<void> {
  const post = async (resource: string, body: object) => {
    const res = await fetch(`${gateway.baseUrl}/v1/Account/${gateway.authId}/${resource}/`, {
      method: 'POST',
      headers: { authorization: gateway.authorization, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`POST ${resource}/ answered ${res.status}: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const application = await post('Application', {
    app_name: 'calls bench',
    answer_url: answerUrl,
    hangup_url: hangupUrl,
  });
  created?.add(`Application/${String(application.app_id)}/`);
  await post('Number', {
    numbers: number,
    carrier: 'Own SIP',
    region: 'West',
    app_id: application.app_id,
  });
  created?.add(`Number/${number}/`);
}

export async function runInboundStep(
  context: InboundContext,
  rate: number,
  seconds: number,
): Promise<InboundStep> {
  const { gateway, app } = context;
  const attempted = Math.round(rate * seconds);
  const hangupsBefore = app.hangups.length;
  const logsBefore = gateway.log?.lineCount() ?? 0;
  const cpuBefore = await context.sampler.begin();
  context.health.take();
  context.stalls.take();
  const result = await runSipp({
    scenario: 'uac-invite.xml',
    target: { host: gateway.sipHost, port: gateway.sipPort },
    calls: attempted,
    rate,
    ratePeriodMs: 1000,
    timeoutMs: seconds * 1000 + 60_000,
    extraArgs: [
      ...sippListenArgs(context.listenHost),
      ...['-s', context.number, '-d', String(context.holdMs)],
    ],
  });
  const cpu = context.sampler.shares(cpuBefore, await context.sampler.read());
  const gatewayHealthMs = context.health.take();
  const machineStalls = context.stalls.take();
  const inbound = () => app.hangups.slice(hangupsBefore).filter((h) => h.direction === 'inbound');
  const deadline = performance.now() + DRAIN_MS;
  while (inbound().length < result.successful + result.failed && performance.now() < deadline)
    await sleep(100);

  const failures: Record<string, number> = {};
  const answerMsHistogram: Record<string, number> = {};
  for (const [name, value] of Object.entries(result.stats)) {
    const failure = /^(Failed\w+)\(C\)$/.exec(name);
    if (failure && Number(value) > 0) failures[failure[1]!] = Number(value);
    const bucket = /^ResponseTimeRepartition1_(.+)$/.exec(name);
    if (bucket) answerMsHistogram[bucket[1]!] = Number(value);
  }
  const causes = tally(
    inbound()
      .filter((h) => h.causeCode !== NORMAL_HANGUP)
      .map((h) => `hangup cause ${h.causeCode} ${h.causeName}`),
  );
  Object.assign(failures, causes);
  return {
    rate,
    seconds,
    attempted,
    successful: result.successful,
    successfulPerSecond: Math.round((result.successful / result.elapsedMs) * 1000),
    failed: result.failed,
    failures,
    meanAnswerMs: durationMs(result.stats['ResponseTime1(C)']),
    answerMsHistogram,
    retransmissions: Number(result.stats['Retransmissions(C)'] ?? 0),
    hangupCallbacks: inbound().length,
    sippFirstErrors: result.errors.slice(0, 10),
    cpu,
    gatewayHealthMs,
    gatewayLogLines: gateway.log ? gateway.log.lineCount() - logsBefore : null,
    machineStalls,
  };
}

/** SIPp's durations read hh:mm:ss:micro. */
export function durationMs(text: string | undefined): number | null {
  const parts = text?.split(':').map(Number);
  if (!parts || parts.length !== 4 || parts.some((n) => !Number.isFinite(n))) return null;
  const [h, m, s, us] = parts as [number, number, number, number];
  return Math.round((((h * 60 + m) * 60 + s) * 1000 + us / 1000) * 10) / 10;
}
