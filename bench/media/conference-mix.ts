/**
 * What does mixing a conference cost the media worker, per member and per 20 ms tick?
 *
 *   npm run bench:conference-mix [-- --ticks 5000]
 *
 * Runs the worker's ConferenceMixer on its own (the decode and encode every leg pays anyway
 * are left out), with every member speaking on every tick: one 10-member conference at 8 kHz,
 * the same at 16 kHz, one of 10 members at 16 kHz but one at 8 kHz (mixed at 8 kHz, nine legs
 * resampled both ways), and 50 two-member conferences at 8 kHz. Prints a table and writes
 * bench/results/conference-mix-*.json with the machine and its load.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConferenceMixer } from '../../src/media/conference/conference-mixer.js';
import type { MediaSession } from '../../src/media/pipeline/media-session.js';
import type { PlayoutSource } from '../../src/media/playout/playout-source.js';
import { describeMachine } from '../api/machine.js';
import { describeRevision } from '../api/revision.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

/** A leg as the mixer sees it: a tap it hears from, a source it plays into. */
class BenchLeg {
  private readonly taps = new Set<(frame: Int16Array) => void>();
  private source: PlayoutSource | null = null;
  private readonly frame: Int16Array;

  constructor(
    readonly rate: 8000 | 16000,
    hz: number,
  ) {
    this.frame = Int16Array.from({ length: rate / 50 }, (_, i) =>
      Math.round(6000 * Math.sin((2 * Math.PI * hz * i) / rate)),
    );
  }

  addTap(tap: (frame: Int16Array) => void): () => void {
    this.taps.add(tap);
    return () => this.taps.delete(tap);
  }

  play(source: PlayoutSource): Promise<boolean> {
    this.source = source;
    return new Promise(() => {});
  }

  /** What the leg's own tick does around the mix: hands its frame in, plays one out. */
  speak(): void {
    for (const tap of this.taps) tap(this.frame);
  }

  listen(): void {
    this.source?.read(this.rate / 50);
  }
}

interface Case {
  name: string;
  conferences: number;
  rates: (8000 | 16000)[];
}

const CASES: Case[] = [
  { name: '10 members, 8 kHz', conferences: 1, rates: Array(10).fill(8000) },
  { name: '10 members, 16 kHz', conferences: 1, rates: Array(10).fill(16000) },
  { name: '10 members, one at 8 kHz', conferences: 1, rates: [...Array(9).fill(16000), 8000] },
  { name: '50 x 2 members, 8 kHz', conferences: 50, rates: [8000, 8000] },
];

function run(spec: Case, ticks: number) {
  const tickers: (() => void)[] = [];
  const clock = { add: (tick: () => void) => (tickers.push(tick), () => {}) };
  const legs: BenchLeg[] = [];
  for (let c = 0; c < spec.conferences; c++) {
    const mixer = new ConferenceMixer(clock);
    spec.rates.forEach((rate, i) => {
      const leg = new BenchLeg(rate, 300 + 100 * i);
      legs.push(leg);
      mixer.join(`c${c}m${i}`, leg as unknown as MediaSession, { muted: false, deaf: false });
    });
  }
  const tick = () => {
    for (const leg of legs) leg.speak();
    for (const mix of tickers) mix();
    for (const leg of legs) leg.listen();
  };
  for (let i = 0; i < Math.min(500, ticks); i++) tick();
  const started = process.hrtime.bigint();
  for (let i = 0; i < ticks; i++) tick();
  const perTickUs = Number(process.hrtime.bigint() - started) / 1000 / ticks;
  return {
    case: spec.name,
    members: legs.length,
    perTickUs: Number(perTickUs.toFixed(2)),
    perMemberUs: Number((perTickUs / legs.length).toFixed(3)),
    /** Of one core's 20 ms. */
    framePercent: Number(((perTickUs / 20_000) * 100).toFixed(3)),
  };
}

const ticksArg = process.argv.indexOf('--ticks');
const ticks = ticksArg > 0 ? Number(process.argv[ticksArg + 1]) : 5000;
const load = loadavg()[0];
const rows = CASES.map((spec) => run(spec, ticks));
console.table(rows);
mkdirSync(RESULTS_DIR, { recursive: true });
const file = join(
  RESULTS_DIR,
  `conference-mix-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
);
writeFileSync(
  file,
  `${JSON.stringify({ machine: describeMachine(), revision: describeRevision(ROOT), loadBefore: load, ticks, rows }, null, 2)}\n`,
);
console.log(`written ${file}`);
