/**
 * How many calls a second does the gateway set up and run to the end, out and in?
 *
 *   npm run bench:calls [-- --outbound-rates 50,100,200,300,400 --inbound-rates 50,100,200,300,400
 *       --step-seconds 10 --realtime-priority 0]
 *
 * Outbound: POST Call/ at each rate in turn (keep-alive HTTP, open loop) to a SIPp carrier
 * (fixtures/sipp/carrier-answer.xml) that answers; the answer XML speaks a sentence and hangs
 * up. A call is completed when its hangup callback says 4000; anything else, an HTTP error, a
 * missing callback or a call SIPp failed is a failure. Post-dial delay is the time from the POST
 * on the wire to the INVITE on the wire, from tcpdump's kernel timestamps on loopback, matched
 * by an X-PH-bench header (wire-capture.ts); the same delay by the generator's clock (the POST
 * written to the INVITE read by a UDP tap in front of SIPp) is reported beside it, and alone
 * when tcpdump cannot run (it needs CAP_NET_RAW).
 * Inbound: SIPp (fixtures/sipp/uac-invite.xml) calls a number whose application speaks and
 * waits; SIPp hangs up after a short hold. Each direction stops climbing after the first rate
 * with a failure. The gateway, SIPp, the application and the generator share the machine: the
 * CPU of each is recorded per step. Before the first step, a warm-up (50 calls/s out, then in,
 * `--warm-up-seconds` each, not counted) runs every code path once, as a gateway in service
 * has: without it the first step measures the JIT compiling the call path. A warm-up that
 * fails is reported and stops the run. `--realtime-priority N` starts the gateway with
 * VOXGATE_REALTIME_PRIORITY=N (0, the default, leaves it at normal priority); the run records
 * the priority its main thread actually ran at. Writes bench/results/calls-*.json.
 *
 * Target mode measures a gateway that is already running, here or on another machine:
 *
 *   VOXGATE_BENCH_AUTH_ID=MA... VOXGATE_BENCH_AUTH_TOKEN=... npm run bench:calls -- \
 *       --gateway-url http://10.0.0.5:8080 --sip 10.0.0.5:5060 --listen-host 10.0.0.9 [...]
 *
 * `--gateway-url` is its REST base (http), `--auth-id` and `--auth-token` (or the two variables
 * above, so that the token stays out of the shell's history) an account of it, `--sip` where
 * the callers send INVITEs (default: the URL's host, port 5060), and `--listen-host` the IPv4
 * address of this machine that the bench's own servers bind and give the gateway (default
 * 127.0.0.1): the application's answer and hangup URLs, the INVITE tap (the calls' SIP
 * destination, to sip:bench@<listen host>:<tap port>, as locally), the carrier's RTP sink and
 * the calling SIPp. The carrier SIPp stays on loopback behind the tap. The run creates its
 * application and number through the REST API and deletes them at the end, failed or
 * interrupted runs included. The gateway's CPU comes from voxgate_process_cpu_seconds_total on
 * its /metrics (the whole process; no split by thread), or is reported unavailable. What only
 * works on a gateway the bench starts is skipped, each with its reason in the output and in
 * the JSON's `target.skipped`: post-dial delay on the wire (by the generator's clock instead),
 * `--realtime-priority`, the main thread's share and wait, the gateway's log, and a description
 * of the gateway's host (machine, speed, load and stalls are this machine's). The gateway
 * should allow outbound requests to the listen host (VOXGATE_OUTBOUND_PROFILE=self-hosted for a
 * private address) and have VOXGATE_RATE_LIMIT=0, or the load meets 429s.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  GATEWAY_TARGET_OPTIONS,
  readGatewayTarget,
  SKIPPED_GATEWAY_LOG,
  targetLines,
  type SkippedInTarget,
} from '../api/gateway-target.js';
import { describeMachine, describeRunContext, type RunContext } from '../api/machine.js';
import { probeMachineSpeed } from '../api/machine-speed.js';
import { describeRevision } from '../api/revision.js';
import { describeStallWatch, STALL_WATCH_PRIORITY, startStallWatch } from '../api/stall-watch.js';
import { startAppServer } from './app-server.js';
import { CpuSampler } from './cpu-sampler.js';
import { CreatedResources } from './created-resources.js';
import { startCallsGateway } from './gateway.js';
import { HealthProbe } from './health-probe.js';
import { addInboundNumber, runInboundStep, type InboundStep } from './inbound.js';
import { startWireCapture, type WireCapture, type WireCaptureStart } from './wire-capture.js';
import { startInviteTap } from './invite-tap.js';
import { runOutboundStep, type OutboundStep } from './outbound.js';
import { startRtpSink } from './rtp-sink.js';
import { printInbound, printOutbound, verdict } from './report.js';
import { carrierScenario } from './sipp-on-host.js';
import { openBenchGateway } from './target-gateway.js';
import { positiveInteger } from '../api/arguments.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

export const OUTBOUND_ANSWER_XML =
  '<Response><Speak>Thank you for calling.</Speak><Hangup/></Response>';
export const INBOUND_ANSWER_XML = '<Response><Speak>Hello.</Speak><Wait length="5"/></Response>';
const INBOUND_NUMBER = '14155550111';
const INBOUND_HOLD_MS = 300;
const WARM_UP_RATE = 50;
const MEDIA_WORKERS = 1;
const RTP_PORTS = '30000-39999';
const LOCAL_HOST = '127.0.0.1';

function readPlan() {
  const { values } = parseArgs({
    options: {
      'outbound-rates': { type: 'string', default: '50,100,200,300,400' },
      'inbound-rates': { type: 'string', default: '50,100,200,300,400' },
      'step-seconds': { type: 'string', default: '10' },
      'warm-up-seconds': { type: 'string', default: '4' },
      'realtime-priority': { type: 'string' },
      ...GATEWAY_TARGET_OPTIONS,
    },
  });
  const target = readGatewayTarget(values, process.env);
  if (target && values['realtime-priority'] !== undefined)
    throw new Error(
      '--realtime-priority applies to the gateway the bench starts; a gateway named by --gateway-url runs at the priority its operator gave it',
    );
  const priorityText = values['realtime-priority'] ?? '0';
  const priority = Number(priorityText);
  if (!Number.isInteger(priority) || priority < 0 || priority >= STALL_WATCH_PRIORITY) {
    throw new Error(
      `Expected --realtime-priority from 0 to ${STALL_WATCH_PRIORITY - 1} (below the stall watch) but received ${priorityText}`,
    );
  }
  const rates = (name: string, text: string) =>
    text === '' || text === 'none'
      ? []
      : text.split(',').map((r) => positiveInteger(name, r.trim()));
  return {
    outboundRates: rates('--outbound-rates', values['outbound-rates']),
    inboundRates: rates('--inbound-rates', values['inbound-rates']),
    stepSeconds: positiveInteger('--step-seconds', values['step-seconds']),
    warmUpSeconds: positiveInteger('--warm-up-seconds', values['warm-up-seconds']),
    realtimePriority: priority,
    target,
  };
}

/** What a target run cannot do that a local one does, beside the post-dial delay's capture. */
const SKIPPED_IN_TARGET: SkippedInTarget[] = [
  {
    what: 'post-dial delay on the wire',
    reason:
      "tcpdump captures this machine's loopback, where the REST requests and INVITEs pass only when the bench starts the gateway: post-dial delay is by the generator's clock",
  },
  {
    what: 'real-time priority',
    reason:
      "set (VOXGATE_REALTIME_PRIORITY) and read (/proc) only on a gateway the bench starts; the target runs at its operator's",
  },
  {
    what: "the gateway's main thread share and its wait for a core",
    reason: "they are in the gateway host's /proc; /metrics has the whole process's CPU only",
  },
  SKIPPED_GATEWAY_LOG,
  {
    what: "the gateway host's description",
    reason:
      "machine, speed, load average, stalls and box% describe this machine (the load generator's) and the revision this checkout, not the gateway's",
  },
];

async function main(): Promise<void> {
  const plan = readPlan();
  const listenHost = plan.target?.listenHost ?? LOCAL_HOST;
  const machine = describeMachine();
  const date = new Date().toISOString();
  const app = await startAppServer(
    { '/outbound-answer': OUTBOUND_ANSWER_XML, '/inbound-answer': INBOUND_ANSWER_XML },
    listenHost,
  );
  const tap = await startInviteTap(listenHost);
  const sink = await startRtpSink(listenHost);
  const carrier = carrierScenario(listenHost, tap.port);
  const { gateway, target } = await openBenchGateway(plan.target, SKIPPED_IN_TARGET, () =>
    startCallsGateway({
      rtpPorts: RTP_PORTS,
      mediaWorkers: MEDIA_WORKERS,
      realtimePriority: plan.realtimePriority,
    }),
  ).catch(async (error: unknown) => {
    // Without a gateway there is no run: the peers close, or they would keep the process up.
    await sink.stop();
    await Promise.all([tap.stop(), app.close()]);
    carrier.remove();
    throw error;
  });
  if (target) for (const line of targetLines(target)) console.log(line);
  const gatewayPriority = gateway.realtimePriority();
  if (gatewayPriority !== null && gatewayPriority !== plan.realtimePriority) {
    console.log(
      `the gateway runs at real-time priority ${gatewayPriority}, not the ${plan.realtimePriority} asked (see its log)`,
    );
  }
  const wireStart: WireCaptureStart = target
    ? { ok: false, reason: SKIPPED_IN_TARGET[0]!.reason }
    : await startWireCapture({ api: Number(new URL(gateway.baseUrl).port), tap: tap.port });
  const wire: WireCapture | null = wireStart.ok ? wireStart.capture : null;
  if (!wireStart.ok && !target)
    console.log(`post-dial delay by the generator's clock only: ${wireStart.reason}`);
  let wireDroppedPackets = 0;
  const sampler = new CpuSampler(gateway.usage, sink.pid);
  const health = new HealthProbe(gateway.baseUrl);
  const stalls = startStallWatch();
  const created = new CreatedResources(gateway);
  const keepOnSignal = target ? created.removeOnSignal() : () => {};
  const outbound: OutboundStep[] = [];
  let carrierRtpPackets = 0;
  const inbound: InboundStep[] = [];
  try {
    let n = 0;
    await addInboundNumber(
      gateway,
      INBOUND_NUMBER,
      `${app.baseUrl}/inbound-answer`,
      `${app.baseUrl}/hangup`,
      target ? created : undefined,
    );
    const outboundContext = {
      gateway,
      app,
      tap,
      listenHost,
      carrierScenario: carrier.scenario,
      rtpPort: sink.port,
      sampler,
      health,
      stalls,
      wire,
    };
    const inboundContext = {
      gateway,
      app,
      sampler,
      health,
      stalls,
      number: INBOUND_NUMBER,
      holdMs: INBOUND_HOLD_MS,
      listenHost,
    };
    console.log(`warm-up: ${WARM_UP_RATE} calls/s out, then in, ${plan.warmUpSeconds} s each ...`);
    const warmOut = await runOutboundStep(outboundContext, WARM_UP_RATE, plan.warmUpSeconds, n);
    n += warmOut.attempted;
    const warmIn = await runInboundStep(inboundContext, WARM_UP_RATE, plan.warmUpSeconds);
    if (warmOut.failed > 0 || warmIn.failed > 0 || gateway.exited()) {
      throw new Error(
        `the warm-up failed: outbound ${JSON.stringify(warmOut.failures)}, inbound ${JSON.stringify(warmIn.failures)}`,
      );
    }
    for (const rate of plan.outboundRates) {
      console.log(`outbound: ${rate} calls/s for ${plan.stepSeconds} s ...`);
      const step = await runOutboundStep(outboundContext, rate, plan.stepSeconds, n);
      n += step.attempted;
      outbound.push(step);
      if (step.failed > 0 || step.sipp.failed > 0 || gateway.exited()) break;
    }
    for (const rate of plan.inboundRates) {
      if (gateway.exited()) break;
      console.log(`inbound: ${rate} calls/s for ${plan.stepSeconds} s ...`);
      const step = await runInboundStep(inboundContext, rate, plan.stepSeconds);
      inbound.push(step);
      if (step.failed > 0 || Object.keys(step.failures).length > 0) break;
    }
  } finally {
    sampler.stop();
    health.stop();
    await stalls.stop();
    if (wire) wireDroppedPackets = (await wire.stop()).droppedPackets;
    if (created.count > 0) {
      for (const line of await created.removeAll()) console.error(line);
    }
    keepOnSignal();
    await gateway.stop();
    carrierRtpPackets = await sink.stop();
    await Promise.all([tap.stop(), app.close()]);
    carrier.remove();
  }
  const context: RunContext = {
    machine,
    revision: describeRevision(ROOT),
    loadAverageAfter: loadavg().map((x) => Math.round(x * 100) / 100),
    speedAfter: probeMachineSpeed(),
  };
  printOutbound(outbound, !target);
  printInbound(inbound, !target);
  if (target)
    console.log(
      "gw cpu% from the gateway's /metrics; box%, others%, stolen ms and stall max are this machine's",
    );
  const summary = verdict(
    outbound,
    inbound,
    machine.cores,
    target
      ? `the gateway at ${target.gatewayUrl}, with SIPp, the application and the load generator on this machine's ${machine.cores} cores`
      : undefined,
  );
  for (const line of [...summary, ...describeRunContext(context)]) console.log(line);
  const run = {
    benchmark: 'calls',
    date,
    ...(target ? { target } : {}),
    ...context,
    settings: {
      stepSeconds: plan.stepSeconds,
      warmUp: `${WARM_UP_RATE} calls/s outbound, then inbound, ${plan.warmUpSeconds} s each, not counted`,
      outboundAnswerXml: OUTBOUND_ANSWER_XML,
      inboundAnswerXml: INBOUND_ANSWER_XML,
      inboundHoldMs: INBOUND_HOLD_MS,
      mediaWorkers: target ? null : MEDIA_WORKERS,
      gatewayRealtimePriority: target
        ? null
        : { asked: plan.realtimePriority, ranAt: gatewayPriority },
      carrierScenario: carrier.description,
      callerScenario: 'fixtures/sipp/uac-invite.xml',
      sharedMachine: target
        ? `SIPp, the application, the INVITE tap and the load generator ran on this machine; the gateway at ${target.gatewayUrl}`
        : 'gateway, SIPp, the application, the INVITE tap and the load generator all ran on this machine',
      stallWatch: describeStallWatch(stalls),
      postDialDelay: wireStart.ok
        ? {
            measuredOn: 'wire: tcpdump on loopback, POST to INVITE',
            droppedPackets: wireDroppedPackets,
          }
        : {
            measuredOn: "generator's clock: POST written to INVITE read by the tap",
            whyNotWire: wireStart.reason,
          },
    },
    goal: 'at least 300 calls/s sustained with no failed call, p99 post-dial delay at most 20 ms',
    summary,
    outbound,
    inbound,
    carrierRtpPackets,
    unexpectedAppRequests: app.unexpected,
    gatewayLog: gateway.log ? { lines: gateway.log.lineCount(), ...gateway.log.lines() } : null,
  };
  writeResults(date, run);
}

/** bench/results/calls-<date>.json and calls-latest.json. */
function writeResults(date: string, run: object): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const json = `${JSON.stringify(run, null, 2)}\n`;
  for (const name of [`calls-${date.replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')}`, 'calls-latest']) {
    writeFileSync(`${RESULTS_DIR}${name}.json`, json);
    console.log(`wrote bench/results/${name}.json`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
