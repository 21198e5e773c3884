/**
 * Concurrent bidirectional audio streams, each with an echo bot: what the gateway adds.
 *
 *   npm run build && npm run bench:streams [-- --streams 1,100,500,1000 --seconds 10
 *       --ramp-rate 100 --media-workers 1 --legs pcmu,webrtc]
 *
 * Callers are plain SIP over UDP from this process (INVITE with PCMU, ACK, BYE) with their own
 * RTP: one 20 ms clock sends a mu-law frame for every caller, numbered in its first bytes. The
 * number's application answers each call with a bidirectional Stream (keepCallAlive) to an
 * echo bot on a worker thread, which sends every inbound media event straight back as
 * playAudio. Per step, the calls are set up at `--ramp-rate` calls/s, sending silence; once
 * every stream has started, every caller sends numbered audio for `--seconds`; then all hang
 * up, and the gateway's voxgate_media_sessions must come back to 0. Reported per step: the
 * gateway-added latency each way from its histograms (voxgate_stream_inbound_latency_seconds,
 * voxgate_stream_playout_latency_seconds; null when it lacks them), the round trip at the
 * caller, frames lost on the way to the bot and back, the gateway's CPU and memory per stream,
 * and the generator's own lateness. Climbing stops at a step that loses more than 1 % of its
 * frames or fails to set up a call or stream. Once the gateway has stopped, each step's number
 * of streams runs through the socket floor, relays that do only the streams' socket work, in C
 * (socket-floor.c) and on Node (socket-floor-node.ts), and their CPU per stream is printed
 * beside the gateway's. Writes bench/results/streams-*.json.
 *
 * `--legs pcmu,webrtc` runs every step twice, the second time with WebRTC callers: the same
 * load, each caller's leg offered as a browser offers it (ICE, DTLS-SRTP, Opus at 48 kHz's
 * clock, 16 kHz coding) and driven by a Node peer (test/support/webrtc-peer-transport.ts). The
 * two are printed side by side with their ratio, and the WebRTC step adds the time from the
 * 200 OK to DTLS done and to the gateway's first SRTP packet. `--rounds N` runs the whole
 * climb N times over, the two legs of a size one after the other each time (in the other order
 * every other round), and adds the median of the rounds' ratios: two runs of one build differ
 * by up to a quarter on a shared machine.
 *
 * Target mode measures a gateway that is already running, here or on another machine, with the
 * same flags as bench:calls (no build needed here):
 *
 *   VOXGATE_BENCH_AUTH_ID=MA... VOXGATE_BENCH_AUTH_TOKEN=... npm run bench:streams -- \
 *       --gateway-url http://10.0.0.5:8080 --sip 10.0.0.5:5060 --listen-host 10.0.0.9 [...]
 *
 * `--gateway-url` is its REST base (http), `--auth-id` and `--auth-token` (or the two variables
 * above) an account of it, `--sip` where the callers send INVITEs (default: the URL's host, port
 * 5060), and `--listen-host` the IPv4 address of this machine that the callers (SIP and RTP),
 * the application and the echo bot bind and give the gateway (default 127.0.0.1). The run
 * creates its application and number through the REST API and deletes them at the end, failed
 * or interrupted runs included. The gateway's CPU and memory come from its /metrics
 * (voxgate_process_cpu_seconds_total, voxgate_process_resident_memory_bytes), or are reported
 * unavailable; `--media-workers`, the split of its CPU by thread, the build check, its log and
 * a description of its host are skipped, each with its reason in the output and in the JSON's
 * `target.skipped`.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
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
import { startAppServer } from '../calls/app-server.js';
import { describeStallWatch, startStallWatch } from '../api/stall-watch.js';
import { CpuSampler } from '../calls/cpu-sampler.js';
import { CreatedResources } from '../calls/created-resources.js';
import { RESIDENT_METRIC } from '../calls/gateway-usage.js';
import { startCallsGateway } from '../calls/gateway.js';
import { addInboundNumber } from '../calls/inbound.js';
import { openBenchGateway } from '../calls/target-gateway.js';
import { startEchoBot } from './echo-bot.js';
import { readGatewayMetrics } from './gateway-metrics.js';
import {
  GOAL_P99_MS,
  GOAL_STREAMS,
  memoryPerStreamKiB,
  printLegs,
  printSocketFloor,
  printSteps,
  verdict,
} from './report.js';
import { CallerMedia } from './rtp-callers.js';
import { SipUac } from './sip-uac.js';
import { runStreamStep, type CallerLeg, type StreamStep } from './stream-step.js';
import { WebrtcCallers } from './webrtc-caller.js';
import { buildSocketFloor, measureSocketFloor, type SocketFloor } from './socket-floor.js';
import { positiveInteger } from '../api/arguments.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const MAIN_JS = join(ROOT, 'dist/src/main.js');

const NUMBER = '14155550122';
const RTP_PORTS = '30000-39999';
const LOCAL_HOST = '127.0.0.1';
const MEDIA_WORKERS = '1';
/** Callers' RTP ports: below the gateway's range and the kernel's ephemeral ports. */
const CALLER_FIRST_PORT = 20000;
const CONTENT_TYPE = 'audio/x-mulaw;rate=8000';
/** A step that loses more than this share of its frames is the last. */
const MAX_LOST_PERCENT = 1;

export const answerXml = (botUrl: string) =>
  `<Response><Stream bidirectional="true" keepCallAlive="true" contentType="${CONTENT_TYPE}">${botUrl}</Stream></Response>`;

function readPlan() {
  const { values } = parseArgs({
    options: {
      streams: { type: 'string', default: '1,100,500,1000' },
      seconds: { type: 'string', default: '10' },
      'ramp-rate': { type: 'string', default: '100' },
      'media-workers': { type: 'string' },
      'opus-complexity': { type: 'string' },
      legs: { type: 'string', default: 'pcmu' },
      rounds: { type: 'string', default: '1' },
      'skip-socket-floor': { type: 'boolean', default: false },
      ...GATEWAY_TARGET_OPTIONS,
    },
  });
  const target = readGatewayTarget(values, process.env);
  if (target && values['media-workers'] !== undefined)
    throw new Error(
      '--media-workers applies to the gateway the bench starts; a gateway named by --gateway-url runs with the workers its operator gave it',
    );
  if (target && values['opus-complexity'] !== undefined)
    throw new Error(
      "--opus-complexity applies to the gateway the bench starts; a gateway named by --gateway-url runs with its operator's VOXGATE_OPUS_COMPLEXITY",
    );
  return {
    streams: values.streams.split(',').map((s) => positiveInteger('--streams', s.trim())),
    seconds: positiveInteger('--seconds', values.seconds),
    rampRate: positiveInteger('--ramp-rate', values['ramp-rate']),
    mediaWorkers: positiveInteger('--media-workers', values['media-workers'] ?? MEDIA_WORKERS),
    opusComplexity: opusComplexity(values['opus-complexity']),
    legs: readLegs(values.legs),
    rounds: positiveInteger('--rounds', values.rounds),
    skipSocketFloor: values['skip-socket-floor'],
    target,
  };
}

/** --opus-complexity: the started gateway's VOXGATE_OPUS_COMPLEXITY, 0-10; its default when absent. */
function opusComplexity(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) > 10)
    throw new Error(`Expected --opus-complexity from 0 to 10 but received ${text}`);
  return Number(text);
}

function readLegs(text: string): CallerLeg[] {
  const legs = text.split(',').map((leg) => leg.trim());
  for (const leg of legs)
    if (leg !== 'pcmu' && leg !== 'webrtc')
      throw new Error(`Expected --legs of pcmu and webrtc but received ${text}`);
  return legs as CallerLeg[];
}

/** What a target run cannot do that a local one does. */
const SKIPPED_IN_TARGET: SkippedInTarget[] = [
  {
    what: "the gateway's main thread and other threads",
    reason:
      "their split is in the gateway host's /proc; /metrics has the whole process's CPU and memory only",
  },
  {
    what: 'the build check',
    reason:
      "the gateway runs its operator's build; the revision recorded is this checkout's, the bench's",
  },
  SKIPPED_GATEWAY_LOG,
  {
    what: "the gateway host's description",
    reason:
      "machine, speed, load average, stalls, UDP drops and machine% describe this machine (the callers' and the bot's), not the gateway's",
  },
];

/** The built gateway must be there; a src/ file newer than it means a stale build. */
function checkBuild(): void {
  if (!existsSync(MAIN_JS)) throw new Error('dist/src/main.js is missing: run npm run build');
  const built = statSync(MAIN_JS).mtimeMs;
  const newer = (dir: string): string | null => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        const found = newer(path);
        if (found) return found;
      } else if (entry.name.endsWith('.ts') && statSync(path).mtimeMs > built) {
        return path;
      }
    }
    return null;
  };
  const stale = newer(join(ROOT, 'src'));
  if (stale)
    console.warn(
      `warning: ${stale.slice(ROOT.length)} is newer than dist/src/main.js: run npm run build to measure it`,
    );
}

function stopReason(step: StreamStep): string | null {
  const reasons: string[] = [];
  if (step.streamsStarted < step.streams)
    reasons.push(`${step.streams - step.streamsStarted} of ${step.streams} streams did not start`);
  if (Object.keys(step.failures).length > 0) reasons.push(JSON.stringify(step.failures));
  if (step.frames.lostPercent > MAX_LOST_PERCENT)
    reasons.push(`${step.frames.lostPercent}% of frames lost at ${step.streams} streams`);
  return reasons.length > 0 ? reasons.join('; ') : null;
}

async function main(): Promise<void> {
  const plan = readPlan();
  const listenHost = plan.target?.listenHost ?? LOCAL_HOST;
  if (!plan.target) checkBuild();
  const machine = describeMachine();
  const date = new Date().toISOString();
  const bot = await startEchoBot(listenHost);
  const xml = answerXml(bot.url);
  const app = await startAppServer({ '/answer': xml }, listenHost);
  const { gateway, target } = await openBenchGateway(plan.target, SKIPPED_IN_TARGET, () =>
    startCallsGateway({
      rtpPorts: RTP_PORTS,
      mediaWorkers: plan.mediaWorkers,
      ...(plan.opusComplexity !== undefined && { opusComplexity: plan.opusComplexity }),
    }),
  ).catch(async (error: unknown) => {
    // Without a gateway there is no run: the peers close, or they would keep the process up.
    await Promise.all([bot.stop(), app.close()]);
    throw error;
  });
  if (target) for (const line of targetLines(target)) console.log(line);
  // No SIPp and no RTP sink here: the sampler's figures for them read as nothing.
  const sampler = new CpuSampler(gateway.usage, 0);
  const stalls = startStallWatch();
  const uac = await SipUac.open(gateway.sipHost, gateway.sipPort, listenHost);
  const media = new CallerMedia(CALLER_FIRST_PORT, listenHost);
  const created = new CreatedResources(gateway);
  const keepOnSignal = target ? created.removeOnSignal() : () => {};
  const steps: StreamStep[] = [];
  let stoppedBecause: string | null = null;
  let histogramsPresent = false;
  try {
    await addInboundNumber(
      gateway,
      NUMBER,
      `${app.baseUrl}/answer`,
      `${app.baseUrl}/hangup`,
      target ? created : undefined,
    );
    const metrics = await readGatewayMetrics(gateway);
    histogramsPresent = metrics.inbound !== null && metrics.playout !== null;
    if (!histogramsPresent)
      console.log(
        'note: the gateway does not export the stream latency histograms yet; they are reported as null',
      );
    const webrtc = new WebrtcCallers();
    climb: for (let round = 1; round <= plan.rounds; round++) {
      // Every other round the legs go the other way round: the leg that runs second in a size
      // runs on the gateway as the first left it, and neither kind should always be that one.
      const legs = round % 2 === 0 ? [...plan.legs].reverse() : plan.legs;
      for (const streams of plan.streams) {
        for (const leg of legs) {
          if (gateway.exited()) {
            stoppedBecause = 'the gateway exited';
            break climb;
          }
          const pass = plan.rounds > 1 ? `, round ${round}` : '';
          console.log(
            `${streams} streams (${leg}${pass}): set up at ${plan.rampRate} calls/s, then ${plan.seconds} s of audio ...`,
          );
          const step = await runStreamStep(
            {
              ...{ gateway, uac, media, bot, sampler, stalls, number: NUMBER },
              ...{ rampRate: plan.rampRate, leg, webrtc },
            },
            streams,
            plan.seconds,
          );
          const ran = { ...step, round };
          steps.push(ran);
          stoppedBecause = stopReason(ran);
          if (stoppedBecause) break climb;
        }
      }
    }
  } finally {
    media.stop();
    sampler.stop();
    await stalls.stop();
    uac.close();
    if (created.count > 0) {
      for (const line of await created.removeAll()) console.error(line);
    }
    keepOnSignal();
    await gateway.stop();
    await Promise.all([bot.stop(), app.close()]);
  }
  const floor = target || plan.skipSocketFloor ? null : await runSocketFloor(steps);
  const context: RunContext = {
    machine,
    revision: describeRevision(ROOT),
    loadAverageAfter: loadavg().map((x) => Math.round(x * 100) / 100),
    speedAfter: probeMachineSpeed(),
  };
  printSteps(steps);
  if (plan.legs.includes('webrtc')) printLegs(steps);
  if (floor) printSocketFloor(steps, floor);
  if (target)
    console.log(
      "gw cpu% from the gateway's /metrics, KiB/str from its resident memory there; stall max is this machine's",
    );
  const summary = verdict(
    steps,
    machine.cores,
    stoppedBecause,
    target
      ? `the gateway at ${target.gatewayUrl}, with the callers and the echo bot on this machine's ${machine.cores} cores`
      : undefined,
  );
  for (const line of [...summary, ...describeRunContext(context)]) console.log(line);
  const base = steps[0];
  const run = {
    benchmark: 'streams',
    date,
    ...(target ? { target } : {}),
    ...context,
    settings: {
      streams: plan.streams,
      seconds: plan.seconds,
      rampRate: plan.rampRate,
      legs: plan.legs,
      rounds: plan.rounds,
      answerXml: answerXml(`ws://${listenHost}:<bot port>/echo`),
      mediaWorkers: target ? null : plan.mediaWorkers,
      opusComplexity: target ? null : (plan.opusComplexity ?? 'default (1 narrowband, 5 wider)'),
      rtpPorts: target ? null : RTP_PORTS,
      callerAudio:
        'PCMU, 20 ms frames: a 400 Hz tone whose first 5 bytes number the frame; silence (0xFF) while calls are set up; ' +
        'webrtc legs: the same tone and silence at 16 kHz in Opus (24 kbit/s, encoded once), SRTP-protected per packet, echoed audio counted without numbers (so no round trip)',
      callerClock: 'one 20 ms timer sends a frame for every caller at once',
      echoBot: 'a ws server on a worker thread of the bench process',
      latencyHistograms: histogramsPresent
        ? 'from the gateway /metrics, read before and after the audio window, p50/p99 interpolated within buckets'
        : 'not exported by this gateway: null',
      memoryPerStream: `gateway RSS growth from the ${base?.streams ?? 1}-stream step, divided by the extra streams${target ? ` (${RESIDENT_METRIC} on its /metrics)` : ''}`,
      sharedMachine: target
        ? `the callers (SIP and RTP), the application and the echo bot ran on this machine; the gateway at ${target.gatewayUrl}`
        : 'the gateway, the callers (SIP and RTP), the application and the echo bot all ran on this machine',
      stallWatch: describeStallWatch(stalls),
    },
    goal: `${GOAL_STREAMS} streams with gateway-added p99 latency at most ${GOAL_P99_MS} ms each way and no frame lost`,
    summary,
    stoppedBecause,
    steps: steps.map((s) => ({ ...s, memoryPerStreamKiB: memoryPerStreamKiB(s, base) })),
    socketFloor: floor,
    unexpectedAppRequests: app.unexpected,
    gatewayLog: gateway.log ? { lines: gateway.log.lineCount(), ...gateway.log.lines() } : null,
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const json = `${JSON.stringify(run, null, 2)}\n`;
  for (const name of [
    `streams-${date.replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')}`,
    'streams-latest',
  ]) {
    writeFileSync(`${RESULTS_DIR}${name}.json`, json);
    console.log(`wrote bench/results/${name}.json`);
  }
}

/**
 * The same streams through the socket floor's relays, which do only their socket work, once the
 * gateway has stopped: socket-floor.c, what any gateway on kernel sockets pays here per stream,
 * and socket-floor-node.ts, the same from Node with the gateway's datagram reader; beside what
 * the gateway pays. Not run against a gateway elsewhere (it measures this machine).
 */
async function runSocketFloor(
  steps: StreamStep[],
): Promise<{ steps: SocketFloor[] } | { skipped: string }> {
  const built = buildSocketFloor();
  if ('skipped' in built) {
    console.log(`note: ${built.skipped}`);
    return built;
  }
  try {
    const floors: SocketFloor[] = [];
    // The floor does a stream's socket work whatever its leg: once per number of streams.
    for (const step of steps.filter(
      (s, i) => steps.findIndex((t) => t.streams === s.streams) === i,
    )) {
      for (const relay of ['c', 'node'] as const) {
        console.log(
          `${step.streams} streams through the socket floor's ${relay === 'c' ? 'C' : 'Node'} relay for ${step.seconds} s ...`,
        );
        floors.push(await measureSocketFloor(built.binary, step.streams, step.seconds, relay));
      }
    }
    return { steps: floors };
  } catch (error) {
    // The gateway's figures are the run's; a floor that fails is said, and they are kept.
    const skipped = `the socket floor failed: ${error instanceof Error ? error.message : String(error)}`;
    console.log(`note: ${skipped}`);
    return { skipped };
  } finally {
    rmSync(built.dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
