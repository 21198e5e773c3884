import { parseArgs } from 'node:util';

export interface TimingPlan {
  /** Untimed running of every case first, so the JIT and the caches have settled. */
  warmupMs: number;
  rounds: number;
  roundMs: number;
}

/** A contender's work for one 20 ms frame; returns a number so the work cannot be optimised away. */
export type FrameWork = () => number;

export interface TimedCase {
  id: string;
  work: FrameWork;
}

/** Per case: microseconds per frame in each round, and CPU over wall time in each round. */
export interface CaseTiming {
  roundsUsPerFrame: number[];
  roundsCpuShare: number[];
}

interface TimedRun {
  frames: number;
  nanoseconds: number;
  cpuShare: number;
}

/**
 * Warms every case up, then times them in rounds that go round-robin over the cases, so a burst
 * of other work on the machine lands on all of them rather than on one. The clock is read every
 * `batch` frames, sized from the warm-up to about a millisecond of work.
 */
export function timeCases(cases: readonly TimedCase[], plan: TimingPlan): Map<string, CaseTiming> {
  const batches = new Map<string, number>();
  for (const c of cases) {
    const warmup = timeFrames(c.work, plan.warmupMs, 1);
    const ns = warmup.nanoseconds / warmup.frames;
    batches.set(c.id, Math.max(1, Math.min(10_000, Math.round(1e6 / ns))));
  }
  const timings = new Map<string, CaseTiming>(
    cases.map((c) => [c.id, { roundsUsPerFrame: [], roundsCpuShare: [] }]),
  );
  for (let round = 0; round < plan.rounds; round++) {
    for (const c of cases) {
      const run = timeFrames(c.work, plan.roundMs, batches.get(c.id)!);
      const timing = timings.get(c.id)!;
      timing.roundsUsPerFrame.push(run.nanoseconds / run.frames / 1e3);
      timing.roundsCpuShare.push(run.cpuShare);
    }
  }
  return timings;
}

/** Every timed frame's result lands here, so none of the work can be optimised away. */
let sink = 0;

function timeFrames(work: FrameWork, milliseconds: number, batch: number): TimedRun {
  const budget = BigInt(Math.round(milliseconds * 1e6));
  let frames = 0;
  let acc = 0;
  const cpuBefore = process.cpuUsage();
  const start = process.hrtime.bigint();
  let elapsed = 0n;
  while (elapsed < budget) {
    for (let i = 0; i < batch; i++) acc += work();
    frames += batch;
    elapsed = process.hrtime.bigint() - start;
  }
  const cpu = process.cpuUsage(cpuBefore);
  sink = (sink + acc) | 0;
  return {
    frames,
    nanoseconds: Number(elapsed),
    cpuShare: ((cpu.user + cpu.system) * 1e3) / Number(elapsed),
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const camel = (name: string): string =>
  name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * The plan from `--rounds`, `--round-ms` and `--warmup-ms` (and any `extra` whole-number
 * options, read into their camel-case names), each a positive integer.
 */
export function timingPlanFromArgs<Extra extends string = never>(
  defaults: { rounds?: number; roundMs: number; warmupMs: number },
  extra: Readonly<Record<Extra, number>> = {} as Record<Extra, number>,
): TimingPlan & Record<string, number> {
  const options: Record<string, { type: 'string'; default: string }> = {
    rounds: { type: 'string', default: String(defaults.rounds ?? 7) },
    'round-ms': { type: 'string', default: String(defaults.roundMs) },
    'warmup-ms': { type: 'string', default: String(defaults.warmupMs) },
  };
  for (const [name, value] of Object.entries<number>(extra))
    options[name] = { type: 'string', default: String(value) };
  const { values } = parseArgs({ options });
  const plan: Record<string, number> = {};
  for (const name of Object.keys(options)) {
    const value = Number(values[name]);
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`Expected a positive integer for ${name} but received ${values[name]}`);
    plan[camel(name)] = value;
  }
  return plan as TimingPlan & Record<string, number>;
}
