import { fieldsDigest, type UasFields } from './uas-fields.js';

/** One timed run of a parser on one message. */
export interface TimedRun {
  messages: number;
  nanoseconds: number;
  /**
   * CPU time the process used over wall time: near 1 when the parser had a core to itself,
   * lower when other work on the machine took turns on it (GC helper threads can push it above 1).
   */
  cpuShare: number;
  /** False when some iteration read different fields from the ones checked before timing. */
  digestMatched: boolean;
}

/**
 * Parses `bytes` over and over for at least `milliseconds`, reading the fields every time, and
 * checks through a running digest that every iteration read the same values as `expected`. The
 * clock is read every `batch` messages: often enough to stop on time, rarely enough to cost
 * nothing next to the parsing.
 */
export function timeParser(
  read: (bytes: Buffer) => UasFields,
  bytes: Buffer,
  expected: UasFields,
  milliseconds: number,
  batch = 1,
): TimedRun {
  const budget = BigInt(Math.round(milliseconds * 1e6));
  let digest = 0;
  let messages = 0;
  const cpuBefore = process.cpuUsage();
  const start = process.hrtime.bigint();
  let elapsed = 0n;
  while (elapsed < budget) {
    for (let i = 0; i < batch; i++) digest += fieldsDigest(read(bytes));
    messages += batch;
    elapsed = process.hrtime.bigint() - start;
  }
  const cpu = process.cpuUsage(cpuBefore);
  return {
    messages,
    nanoseconds: Number(elapsed),
    cpuShare: ((cpu.user + cpu.system) * 1e3) / Number(elapsed),
    digestMatched: digest === fieldsDigest(expected) * messages,
  };
}

/** How many messages take about a millisecond, from a run that measured them. */
export function batchForOneMillisecond(run: TimedRun): number {
  const nsPerMessage = run.nanoseconds / run.messages;
  return Math.max(1, Math.min(10_000, Math.round(1e6 / nsPerMessage)));
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
