/**
 * Tunes answering-machine detection offline, reproducibly:
 *
 *   node --import tsx bench/amd/tune.ts [--top 10]
 *
 * Runs the classifier (as offline.ts does: 20 ms frames of each clip, mu-law decoded, audio
 * from the answer) over a fixed grid of settings on the `tune` third of the corpus (corpus.ts;
 * generated into its cache directory when missing) and picks the fastest median decision, ties
 * to the more accurate, then the nearer the current defaults, twice: among the settings that
 * meet the goals on the tune part (accuracy >= 90 %, humans classified as machine <= 3 %), and
 * among those that meet them with a margin (see MARGIN). Prints the figures of the current
 * defaults and of both picks on both parts; the `report` part is never used to choose. Figures
 * as run.ts counts them: unknown is Machine=false, right for a human; decision times run from
 * the answer. Last, a floor under the median decision of any such classifier on this corpus
 * (showTimingBound). Takes a few minutes on one core.
 */
import { parseArgs } from 'node:util';
import { muLawDecode } from '../../src/media/codec/g711.js';
import { frameEnergy } from '../../src/media/pipeline/frame-level.js';
import {
  DEFAULT_MACHINE_DETECTION,
  GREETING_SHAPE,
  MachineClassifier,
  type GreetingShape,
  type MachineDetectionSettings,
  type MachineVerdict,
} from '../../src/media/pipeline/machine-classifier.js';
import { corpusSpecs, renderCorpus, type Clip } from './corpus.js';

interface Candidate {
  settings: MachineDetectionSettings;
  shape: GreetingShape;
}

/** A clip with its frames decoded once, as the media worker would hand them over. */
interface DecodedClip {
  clip: Clip;
  frames: Int16Array[];
}

interface Figures {
  clips: number;
  accuracyPercent: number;
  humansAsMachinePercent: number;
  machinesMissedPercent: number;
  unknownPercent: number;
  p50Humans: number;
  p50Machines: number;
  p50All: number;
  p95All: number;
}

const GOALS = { accuracyPercent: 90, humansAsMachinePercent: 3 };
/** A pause this long ends an utterance (showTimingBound): longer than those inside a sentence. */
const PAUSE_MS = 300;
/**
 * The tune part is small (45 humans: one called a machine is already 2.2 %, next to the 3 %
 * goal), and settings picked at the edge of the goals there lose about 2.5 points of accuracy
 * and gain humans called machines on the report part: so no human called a machine, and 3
 * points of accuracy to spare.
 */
const MARGIN = { accuracyPercent: 93, humansAsMachinePercent: 0 };

/**
 * The grid: the public parameters that set the decision times, from eager to their first
 * defaults (700, 2200, 3500), and the short-greeting rule from off (0) to eager.
 */
const GRID = {
  afterGreetingSilenceMs: [400, 500, 600, 700],
  greetingMs: [1800, 2000, 2200, 2400],
  initialSilenceMs: [2500, 3000, 3500],
  shortGreetingMs: [0, 800, 1200, 1500],
  shortGreetingSilenceShare: [0.5, 0.6, 0.7],
};

const { values } = parseArgs({ options: { top: { type: 'string', default: '10' } } });

const clips = renderCorpus(corpusSpecs()).map(decode);
const tune = clips.filter((c) => c.clip.split === 'tune');
const report = clips.filter((c) => c.clip.split === 'report');

const current: Candidate = { settings: DEFAULT_MACHINE_DETECTION, shape: GREETING_SHAPE };
const started = Date.now();
const scored = candidates().map((candidate) => ({ candidate, figures: evaluate(candidate, tune) }));
console.log(
  `${scored.length} settings on the tune part (${tune.length} clips) in ${Date.now() - started} ms`,
);
const picks = [
  { title: 'meeting the goals', limits: GOALS },
  { title: 'meeting the goals with a margin', limits: MARGIN },
].map(({ title, limits }) => {
  const passing = scored
    .filter(({ figures }) => within(figures, limits))
    .sort(
      (a, b) =>
        a.figures.p50All - b.figures.p50All ||
        b.figures.accuracyPercent - a.figures.accuracyPercent ||
        distance(a.candidate) - distance(b.candidate),
    );
  console.log(`\n${passing.length} ${title} on the tune part; the fastest ${values.top}:`);
  for (const { candidate, figures } of passing.slice(0, Number(values.top))) {
    console.log(`  ${line(figures)}  ${describe(candidate)}`);
  }
  return { title, best: passing[0]?.candidate };
});
show('current defaults', current);
for (const { title, best } of picks) if (best) show(`fastest ${title}`, best);
showTimingBound();

function show(title: string, candidate: Candidate): void {
  console.log(`\n${title}: ${describe(candidate)}`);
  console.log(`  tune   ${line(evaluate(candidate, tune))}`);
  console.log(`  report ${line(evaluate(candidate, report))}`);
  for (const category of new Set(report.map((c) => c.clip.category))) {
    const verdicts = report
      .filter((c) => c.clip.category === category)
      .map((c) => classify(c, candidate));
    const cells = verdicts.map((v) => `${v.result[0]}${(v.afterMs / 1000).toFixed(1)}`);
    console.log(`    ${category.padEnd(19)} ${cells.join(' ')}`);
  }
}

/**
 * How soon any classifier of energy and word timing could decide the report part, whatever its
 * settings: a human once the pause that ends the first utterance is heard (the first of
 * PAUSE_MS), a silent callee at 2 s (the least
 * machine_detection_initial_silence the API takes), and a machine when its greeting has run
 * longer than the business greetings (humans) of the tune part, all but the few the goal lets
 * be called machines; any sooner and more would be. The median of those times is a floor for
 * the median decision on this corpus.
 */
function showTimingBound(): void {
  // The goal lets 3 % of the tune part's humans be called machines: that many of the longest
  // business greetings may be cut short.
  const spared = Math.floor((GOALS.humansAsMachinePercent / 100) * tune.filter(isHuman).length);
  const businessMs = tune
    .filter((c) => c.clip.category === 'business-greeting')
    .map((c) => {
      const { firstMs, utteranceEndMs } = speechSpan(c);
      return utteranceEndMs - firstMs;
    })
    .sort((a, b) => b - a);
  const machineAfterMs = businessMs[spared] ?? 0;
  const floors = report.map((c) => {
    const { firstMs, utteranceEndMs } = speechSpan(c);
    if (firstMs < 0) return 2000;
    return isHuman(c) ? utteranceEndMs + PAUSE_MS : firstMs + machineAfterMs;
  });
  const under = floors.filter((ms) => ms <= 2500).length;
  console.log(
    `\ntiming bound: a machine told from a business greeting after ${machineAfterMs} ms of it` +
      ` (the tune part's longest but ${spared}); the earliest decisions of the report part` +
      ` have a median of ${(percentile(floors, 50) / 1000).toFixed(2)} s` +
      ` (${under} of ${floors.length} by 2.5 s)`,
  );
}

function isHuman({ clip }: DecodedClip): boolean {
  return clip.label === 'human';
}

/** The first voiced frame and the end of the first utterance (-1 when silent), in ms. */
function speechSpan({ frames }: DecodedClip): { firstMs: number; utteranceEndMs: number } {
  const rms = frames.map((f) => Math.sqrt(frameEnergy(f) / f.length));
  const floor = [...rms].sort((a, b) => a - b)[Math.floor(rms.length / 10)] ?? 0;
  const voiced = rms.map((r) => r >= Math.max(185, floor * 3.2));
  const first = voiced.indexOf(true);
  if (first < 0) return { firstMs: -1, utteranceEndMs: -1 };
  const pauseFrames = PAUSE_MS / 20;
  let end = voiced.length;
  for (let i = first, quiet = 0; i < voiced.length; i++) {
    quiet = voiced[i] ? 0 : quiet + 1;
    if (quiet === pauseFrames) {
      end = i - pauseFrames + 1;
      break;
    }
  }
  return { firstMs: first * 20, utteranceEndMs: end * 20 };
}

function candidates(): Candidate[] {
  const out: Candidate[] = [];
  for (const afterGreetingSilenceMs of GRID.afterGreetingSilenceMs)
    for (const greetingMs of GRID.greetingMs)
      for (const initialSilenceMs of GRID.initialSilenceMs)
        for (const shape of shapes())
          out.push({
            settings: {
              ...DEFAULT_MACHINE_DETECTION,
              afterGreetingSilenceMs,
              greetingMs,
              initialSilenceMs,
            },
            shape,
          });
  return out;
}

/** The shapes worth trying: rules that are off are tried once, not once per unused value. */
function shapes(): GreetingShape[] {
  const out: GreetingShape[] = [{ shortGreetingMs: 0, shortGreetingSilenceShare: 1 }];
  for (const shortGreetingMs of GRID.shortGreetingMs.filter((ms) => ms > 0))
    for (const shortGreetingSilenceShare of GRID.shortGreetingSilenceShare)
      out.push({ shortGreetingMs, shortGreetingSilenceShare });
  return out;
}

function decode(clip: Clip): DecodedClip {
  const count = Math.floor(clip.ulaw.length / 160);
  const frames = Array.from({ length: count }, (_, i) =>
    muLawDecode(clip.ulaw.subarray(i * 160, i * 160 + 160)),
  );
  return { clip, frames };
}

/** The verdict on one clip, its audio from the answer on (offline.ts with no lead). */
function classify({ frames }: DecodedClip, { settings, shape }: Candidate): MachineVerdict {
  const classifier = new MachineClassifier(settings, 8000, 20, shape);
  for (let i = 0; ; i++) {
    const verdict = classifier.tick(i < frames.length ? frames[i]! : null);
    if (verdict) return verdict;
  }
}

function evaluate(candidate: Candidate, set: DecodedClip[]): Figures {
  const outcomes = set.map((c) => ({ label: c.clip.label, verdict: classify(c, candidate) }));
  const humans = outcomes.filter((o) => o.label === 'human');
  const machines = outcomes.filter((o) => o.label === 'machine');
  const right = outcomes.filter(
    (o) => (o.verdict.result === 'machine') === (o.label === 'machine'),
  );
  const times = (of: typeof outcomes) => of.map((o) => o.verdict.afterMs);
  return {
    clips: set.length,
    accuracyPercent: percent(right.length, set.length),
    humansAsMachinePercent: percent(
      humans.filter((o) => o.verdict.result === 'machine').length,
      humans.length,
    ),
    machinesMissedPercent: percent(
      machines.filter((o) => o.verdict.result !== 'machine').length,
      machines.length,
    ),
    unknownPercent: percent(
      outcomes.filter((o) => o.verdict.result === 'unknown').length,
      set.length,
    ),
    p50Humans: percentile(times(humans), 50),
    p50Machines: percentile(times(machines), 50),
    p50All: percentile(times(outcomes), 50),
    p95All: percentile(times(outcomes), 95),
  };
}

function within(figures: Figures, limits: typeof GOALS): boolean {
  return (
    figures.accuracyPercent >= limits.accuracyPercent &&
    figures.humansAsMachinePercent <= limits.humansAsMachinePercent
  );
}

/** How far from the current defaults, to prefer the smaller change among equals. */
function distance({ settings, shape }: Candidate): number {
  const d = DEFAULT_MACHINE_DETECTION;
  const steps =
    Math.abs(settings.afterGreetingSilenceMs - d.afterGreetingSilenceMs) / 100 +
    Math.abs(settings.greetingMs - d.greetingMs) / 200 +
    Math.abs(settings.initialSilenceMs - d.initialSilenceMs) / 500;
  return steps + (shape.shortGreetingMs > 0 ? 1 : 0);
}

/** The same percentile as run.ts: the value at rank ceil(p % of n). */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function percent(n: number, of: number): number {
  return of === 0 ? 0 : Math.round((n / of) * 1000) / 10;
}

function line(f: Figures): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return (
    `accuracy ${f.accuracyPercent} %, humans as machine ${f.humansAsMachinePercent} %, ` +
    `machines missed ${f.machinesMissedPercent} %, unknown ${f.unknownPercent} %, ` +
    `p50 humans ${s(f.p50Humans)}, machines ${s(f.p50Machines)}, all ${s(f.p50All)} (p95 ${s(f.p95All)})`
  );
}

function describe({ settings, shape }: Candidate): string {
  const short =
    shape.shortGreetingMs > 0
      ? `short <=${shape.shortGreetingMs} then ${shape.shortGreetingSilenceShare * 100} % of the silence`
      : 'short off';
  return (
    `silence ${settings.afterGreetingSilenceMs}, greeting ${settings.greetingMs}, ` +
    `initial silence ${settings.initialSilenceMs}; ${short}`
  );
}
