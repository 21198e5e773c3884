import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeRunContext, type Machine } from '../api/machine.js';
import type { Revision } from '../api/revision.js';
import type { Contender, g711Agreement } from './dsp-cases.js';
import type { FfmpegResampleRun } from './ffmpeg-resample.js';
import type { TimingPlan } from './frame-timing.js';

/** One contender on one stage: the median over the rounds of microseconds per 20 ms frame. */
export interface DspCaseResult {
  id: string;
  stage: string;
  contender: Contender;
  detail: string;
  usPerFrame: number;
  roundsUsPerFrame: number[];
  roundsCpuShare: number[];
}

/** voxgate against every alternative on one stage; speedup > 1 means voxgate is faster. */
export interface DspComparison {
  stage: string;
  voxgateUsPerFrame: number;
  alternatives: Array<{ contender: Contender; usPerFrame: number; measured: string }>;
  fastestAlternative: Contender;
  /** The fastest alternative's µs per frame over voxgate's. */
  voxgateSpeedup: number;
}

/** Everything `bench:media-dsp` measured, as written to bench/results/. */
export interface MediaDspRun {
  benchmark: 'media-dsp';
  date: string;
  machine: Machine;
  revision: Revision;
  loadAverageAfter: number[];
  plan: TimingPlan & { ffmpegFrames: number };
  audio: { description: string; seconds: number; frames: number };
  settings: { resamplerQuality: number; noiseCancellationLevel: number; ffmpeg: string };
  versions: Record<string, string>;
  g711Agreement: ReturnType<typeof g711Agreement>;
  cases: DspCaseResult[];
  ffmpeg: FfmpegResampleRun[];
  comparisons: DspComparison[];
  inboundGoal: { goalUs: number; voxgateUs: number; met: boolean };
  notes: string[];
}

/** Prints the tables and writes `media-dsp-<date>.json` and `media-dsp-latest.json`. */
export function reportDspRun(run: MediaDspRun, resultsDir: string): string[] {
  console.log(describe(run));
  mkdirSync(resultsDir, { recursive: true });
  const json = JSON.stringify(run, null, 2) + '\n';
  const stamp = run.date.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
  const written = [
    join(resultsDir, `media-dsp-${stamp}.json`),
    join(resultsDir, 'media-dsp-latest.json'),
  ];
  for (const file of written) writeFileSync(file, json);
  return written;
}

function table(header: string[], rows: string[][], rightAligned: number[]): string[] {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((cell, i) =>
        rightAligned.includes(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!),
      )
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

const us = (n: number) => n.toFixed(2);

function describe(run: MediaDspRun): string {
  const p = run.plan;
  const g = run.g711Agreement;
  const out = [
    '',
    `Media DSP per 20 ms frame, ${run.date}`,
    ...describeRunContext(run),
    `input: ${run.audio.description}, ${run.audio.seconds} s (${run.audio.frames} frames), looped`,
    `in-process cases: median of ${p.rounds} rounds of ${p.roundMs} ms after ${p.warmupMs} ms ` +
      `warm-up, round-robin over the cases`,
    `G.711 agreement: decode differs on ${g.decodeCodesDiffering} of ${g.decodeCodes} codes, ` +
      `encode on ${g.encodeSamplesDiffering} of ${g.encodeSamples} samples`,
    '',
  ];
  const caseRows = run.cases.map((c) => [
    c.stage,
    c.contender,
    us(c.usPerFrame),
    `${us(Math.min(...c.roundsUsPerFrame))}..${us(Math.max(...c.roundsUsPerFrame))}`,
    `${Math.round(Math.min(...c.roundsCpuShare) * 100)}%`,
    c.detail,
  ]);
  out.push(
    ...table(
      ['stage', 'contender', 'µs/frame', 'rounds µs', 'min cpu/wall', 'what one frame does'],
      caseRows,
      [2, 3, 4],
    ),
    '',
  );
  out.push(
    `ffmpeg (${run.settings.ffmpeg}): one long-running process per conversion, ` +
      `${p.ffmpegFrames} frames written to its stdin one 20 ms frame per write, all output read; ` +
      'µs/frame = wall time from spawn to exit / frames',
  );
  const ffmpegRows = run.ffmpeg.map((f) => [
    `resample ${f.fromRate / 1000}k to ${f.toRate / 1000}k`,
    us(f.usPerFrame),
    f.wallMs.toFixed(0),
    f.emptyRunMs.toFixed(0),
    f.ffmpegCpuUsPerFrame === null ? '-' : us(f.ffmpegCpuUsPerFrame),
    String(f.outputSamples),
  ]);
  out.push(
    ...table(
      ['stage', 'µs/frame', 'wall ms', 'empty-input run ms', 'ffmpeg cpu µs/frame', 'samples out'],
      ffmpegRows,
      [1, 2, 3, 4, 5],
    ),
    '',
  );
  for (const c of run.comparisons) {
    const others = c.alternatives.map((a) => `${a.contender} ${us(a.usPerFrame)}`).join(', ');
    out.push(
      `${c.stage}: voxgate ${us(c.voxgateUsPerFrame)} µs vs ${others}; voxgate ` +
        `${c.voxgateSpeedup.toFixed(2)}x as fast as ${c.fastestAlternative}`,
    );
  }
  const goal = run.inboundGoal;
  out.push(
    `inbound path goal: at most ${goal.goalUs} µs per frame; voxgate ${us(goal.voxgateUs)} µs: ` +
      (goal.met ? 'met' : 'not met'),
    '',
    ...run.notes.map((n) => `note: ${n}`),
    '',
  );
  return out.join('\n');
}
