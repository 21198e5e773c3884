/**
 * Concurrent bidirectional audio streams, each with an echo bot: what the gateway adds.
 *
 *   npm run build && npm run bench:streams [-- --streams 1,100,500,1000 --seconds 10
 *       --ramp-rate 100 --media-workers 1]
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
 * frames or fails to set up a call or stream. Writes bench/results/streams-*.json.
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { describeMachine, describeRunContext, type RunContext } from '../api/machine.js';
import { probeMachineSpeed } from '../api/machine-speed.js';
import { describeRevision } from '../api/revision.js';
import { startAppServer } from '../calls/app-server.js';
import { describeStallWatch, startStallWatch } from '../api/stall-watch.js';
import { CpuSampler } from '../calls/cpu-sampler.js';
import { startCallsGateway } from '../calls/gateway.js';
import { addInboundNumber } from '../calls/inbound.js';
import { startEchoBot } from './echo-bot.js';
import { readGatewayMetrics } from './gateway-metrics.js';
import { GOAL_P99_MS, GOAL_STREAMS, memoryPerStreamKiB, printSteps, verdict } from './report.js';
import { CallerMedia } from './rtp-callers.js';
import { SipUac } from './sip-uac.js';
import { runStreamStep, type StreamStep } from './stream-step.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const MAIN_JS = join(ROOT, 'dist/src/main.js');

const NUMBER = '14155550122';
const RTP_PORTS = '30000-39999';
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
      'media-workers': { type: 'string', default: '1' },
    },
  });
  const positive = (name: string, text: string) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1)
      throw new Error(`Expected a positive integer for ${name} but received ${text}`);
    return n;
  };
  return {
    streams: values.streams.split(',').map((s) => positive('--streams', s.trim())),
    seconds: positive('--seconds', values.seconds),
    rampRate: positive('--ramp-rate', values['ramp-rate']),
    mediaWorkers: positive('--media-workers', values['media-workers']),
  };
}

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
  checkBuild();
  const machine = describeMachine();
  const date = new Date().toISOString();
  const bot = await startEchoBot();
  const xml = answerXml(bot.url);
  const app = await startAppServer({ '/answer': xml });
  const gateway = await startCallsGateway({
    rtpPorts: RTP_PORTS,
    mediaWorkers: plan.mediaWorkers,
  }).catch(async (error: unknown) => {
    // Without a gateway there is no run: the peers close, or they would keep the process up.
    await Promise.all([bot.stop(), app.close()]);
    throw error;
  });
  // No SIPp and no RTP sink here: the sampler's figures for them read as nothing.
  const sampler = new CpuSampler(gateway.pid, 0);
  const stalls = startStallWatch();
  const uac = await SipUac.open(gateway.sipPort);
  const media = new CallerMedia(CALLER_FIRST_PORT);
  const steps: StreamStep[] = [];
  let stoppedBecause: string | null = null;
  let histogramsPresent = false;
  try {
    await addInboundNumber(gateway, NUMBER, `${app.baseUrl}/answer`, `${app.baseUrl}/hangup`);
    const metrics = await readGatewayMetrics(gateway);
    histogramsPresent = metrics.inbound !== null && metrics.playout !== null;
    if (!histogramsPresent)
      console.log(
        'note: the gateway does not export the stream latency histograms yet; they are reported as null',
      );
    for (const streams of plan.streams) {
      if (gateway.exited()) {
        stoppedBecause = 'the gateway exited';
        break;
      }
      console.log(
        `${streams} streams: set up at ${plan.rampRate} calls/s, then ${plan.seconds} s of audio ...`,
      );
      const step = await runStreamStep(
        { gateway, uac, media, bot, sampler, stalls, number: NUMBER, rampRate: plan.rampRate },
        streams,
        plan.seconds,
      );
      steps.push(step);
      stoppedBecause = stopReason(step);
      if (stoppedBecause) break;
    }
  } finally {
    media.stop();
    sampler.stop();
    await stalls.stop();
    uac.close();
    await gateway.stop();
    await Promise.all([bot.stop(), app.close()]);
  }
  const context: RunContext = {
    machine,
    revision: describeRevision(ROOT),
    loadAverageAfter: loadavg().map((x) => Math.round(x * 100) / 100),
    speedAfter: probeMachineSpeed(),
  };
  printSteps(steps);
  const summary = verdict(steps, machine.cores, stoppedBecause);
  for (const line of [...summary, ...describeRunContext(context)]) console.log(line);
  const base = steps[0];
  const run = {
    benchmark: 'streams',
    date,
    ...context,
    settings: {
      streams: plan.streams,
      seconds: plan.seconds,
      rampRate: plan.rampRate,
      answerXml: answerXml('ws://127.0.0.1:<bot port>/echo'),
      mediaWorkers: plan.mediaWorkers,
      rtpPorts: RTP_PORTS,
      callerAudio:
        'PCMU, 20 ms frames: a 400 Hz tone whose first 5 bytes number the frame; silence (0xFF) while calls are set up',
      callerClock: 'one 20 ms timer sends a frame for every caller at once',
      echoBot: 'a ws server on a worker thread of the bench process',
      latencyHistograms: histogramsPresent
        ? 'from the gateway /metrics, read before and after the audio window, p50/p99 interpolated within buckets'
        : 'not exported by this gateway: null',
      memoryPerStream: `gateway RSS growth from the ${base?.streams ?? 1}-stream step, divided by the extra streams`,
      sharedMachine:
        'the gateway, the callers (SIP and RTP), the application and the echo bot all ran on this machine',
      stallWatch: describeStallWatch(stalls),
    },
    goal: `${GOAL_STREAMS} streams with gateway-added p99 latency at most ${GOAL_P99_MS} ms each way and no frame lost`,
    summary,
    stoppedBecause,
    steps: steps.map((s) => ({ ...s, memoryPerStreamKiB: memoryPerStreamKiB(s, base) })),
    unexpectedAppRequests: app.unexpected,
    gatewayLog: { lines: gateway.logLineCount(), ...gateway.logLines() },
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

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
