/**
 * What does voxgate's media DSP cost per 20 ms frame, against the npm alternatives and ffmpeg?
 *
 *   npm run bench:media-dsp [-- --rounds 7 --round-ms 300 --warmup-ms 300 --ffmpeg-frames 50000]
 *
 * Times, on noisy synthetic speech: mu-law decode and encode (native addon vs alawmulaw);
 * streaming resampling 8k to 16k, 16k to 8k and 8k to 24k (native libspeexdsp vs the
 * speex-resampler WebAssembly build vs a long-running ffmpeg fed through a pipe); noise
 * suppression (libwebrtc's at 8 and 16 kHz vs RNNoise in WebAssembly at 48 kHz); and the whole
 * inbound path of a call leg built from each. Prints tables and writes
 * bench/results/media-dsp-*.json with the machine and its load.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describeMachine } from '../api/machine.js';
import { describeRevision } from '../api/revision.js';
import {
  g711Agreement,
  makeDspCases,
  NOISE_CANCELLATION_LEVEL,
  RESAMPLER_QUALITY,
  RESAMPLINGS,
  type Contender,
} from './dsp-cases.js';
import {
  reportDspRun,
  type DspCaseResult,
  type DspComparison,
  type MediaDspRun,
} from './dsp-report.js';
import { runFfmpegResample, type FfmpegResampleRun } from './ffmpeg-resample.js';
import { median, timeCases, timingPlanFromArgs, type TimingPlan } from './frame-timing.js';
import { frames, makeTestAudio } from './test-audio.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
/** The inbound path's budget per 20 ms frame. */
const INBOUND_GOAL_US = 25;

const timingPlan = (): TimingPlan & { ffmpegFrames: number } => {
  const plan = timingPlanFromArgs({ roundMs: 300, warmupMs: 300 }, { 'ffmpeg-frames': 50000 });
  return { ...plan, ffmpegFrames: plan.ffmpegFrames! };
};

function packageVersion(name: string): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve(`${name}/package.json`, { paths: [ROOT] });
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

function ffmpegVersion(): string {
  const banner = execFileSync('ffmpeg', ['-version'], { encoding: 'utf8' });
  return /^ffmpeg version (\S+)/.exec(banner)?.[1] ?? 'unknown';
}

const round2 = (n: number) => Math.round(n * 100) / 100;

function compare(
  stage: string,
  cases: DspCaseResult[],
  oursStage: string,
  alternatives: Array<{ stage: string; contender: Contender }>,
  ffmpeg?: FfmpegResampleRun,
): DspComparison {
  const find = (s: string, c: Contender) => cases.find((r) => r.stage === s && r.contender === c)!;
  const others = alternatives.map((a) => ({
    contender: a.contender,
    usPerFrame: find(a.stage, a.contender).usPerFrame,
    measured: a.stage === oursStage ? 'in process' : `in process, ${a.stage}`,
  }));
  if (ffmpeg) {
    others.push({
      contender: 'ffmpeg',
      usPerFrame: ffmpeg.usPerFrame,
      measured: 'pipe throughput',
    });
  }
  const fastest = others.reduce((a, b) => (b.usPerFrame < a.usPerFrame ? b : a));
  const ours = find(oursStage, 'voxgate').usPerFrame;
  return {
    stage,
    voxgateUsPerFrame: ours,
    alternatives: others,
    fastestAlternative: fastest.contender,
    voxgateSpeedup: round2(fastest.usPerFrame / ours),
  };
}

function comparisons(cases: DspCaseResult[], ffmpeg: FfmpegResampleRun[]): DspComparison[] {
  const same = (stage: string, ...contenders: Contender[]) =>
    contenders.map((contender) => ({ stage, contender }));
  const rnnoise = { stage: 'noise suppression 48k', contender: 'rnnoise-wasm' as const };
  return [
    compare('mu-law decode', cases, 'mu-law decode', same('mu-law decode', 'alawmulaw')),
    compare('mu-law encode', cases, 'mu-law encode', same('mu-law encode', 'alawmulaw')),
    ...RESAMPLINGS.map(([from, to]) => {
      const stage = `resample ${from / 1000}k to ${to / 1000}k`;
      const pipe = ffmpeg.find((f) => f.fromRate === from && f.toRate === to);
      return compare(stage, cases, stage, same(stage, 'speex-resampler'), pipe);
    }),
    compare('noise suppression 8k', cases, 'noise suppression 8k', [rnnoise]),
    compare('noise suppression 16k', cases, 'noise suppression 16k', [rnnoise]),
    compare('inbound path', cases, 'inbound path', same('inbound path', 'alternatives')),
  ];
}

const NOTES = [
  'in-process figures include each library call as an application makes it: argument checks, ' +
    'output allocation, and for the WebAssembly packages the copies into and out of their memory',
  'RNNoise only works on 480-sample frames at 48 kHz, so its 20 ms costs two frames of 48 kHz ' +
    'audio, converted from int16 to float and back; a call at 8 kHz would also pay for ' +
    'resampling to 48k and back, which the alternatives inbound path includes (speex-resampler)',
  'voxgate denoises at the call rate (8 kHz: two 80-sample frames per 20 ms) before resampling; ' +
    'the alternatives path denoises at 48 kHz between 8k to 48k and 48k to 16k resampling',
  'ffmpeg is not timed in process: a single ffmpeg per conversion is fed frame by frame through ' +
    'a pipe and its figure is wall time from spawn to exit over the frames (start-up included, ' +
    'see the empty-input run), so it is a throughput cost, not a per-frame latency, and ffmpeg ' +
    'may batch several writes into one read; ffmpeg cpu is its own -benchmark user+system time',
  `both libspeexdsp builds run at quality ${RESAMPLER_QUALITY}; ffmpeg uses its default swr ` +
    'resampler, a different filter',
];

async function main(): Promise<void> {
  const plan = timingPlan();
  const machine = describeMachine();
  const date = new Date().toISOString();
  const audio = makeTestAudio();
  const cases = await makeDspCases(audio);
  const timings = timeCases(cases, plan);
  const results: DspCaseResult[] = cases.map((c) => {
    const t = timings.get(c.id)!;
    return {
      id: c.id,
      stage: c.stage,
      contender: c.contender,
      detail: c.detail,
      usPerFrame: round2(median(t.roundsUsPerFrame)),
      roundsUsPerFrame: t.roundsUsPerFrame.map(round2),
      roundsCpuShare: t.roundsCpuShare.map(round2),
    };
  });
  const ffmpeg: FfmpegResampleRun[] = [];
  for (const [from, to] of RESAMPLINGS) {
    const input = frames(audio.pcm[from], from / 50);
    ffmpeg.push(await runFfmpegResample(input, from, to, plan.ffmpegFrames));
  }
  const inbound = results.find((r) => r.id === 'inbound path/voxgate')!.usPerFrame;
  const run: MediaDspRun = {
    benchmark: 'media-dsp',
    date,
    machine,
    revision: describeRevision(ROOT),
    loadAverageAfter: loadavg().map(round2),
    plan,
    audio: {
      description: audio.description,
      seconds: audio.seconds,
      frames: Math.floor(audio.pcm[8000].length / 160),
    },
    settings: {
      resamplerQuality: RESAMPLER_QUALITY,
      noiseCancellationLevel: NOISE_CANCELLATION_LEVEL,
      ffmpeg: ffmpegVersion(),
    },
    versions: Object.fromEntries(
      ['alawmulaw', 'speex-resampler', '@jitsi/rnnoise-wasm'].map((p) => [p, packageVersion(p)]),
    ),
    g711Agreement: g711Agreement(audio),
    cases: results,
    ffmpeg,
    comparisons: comparisons(results, ffmpeg),
    inboundGoal: { goalUs: INBOUND_GOAL_US, voxgateUs: inbound, met: inbound <= INBOUND_GOAL_US },
    notes: NOTES,
  };
  for (const file of reportDspRun(run, RESULTS_DIR)) console.log(`wrote ${file}`);
}

await main();
