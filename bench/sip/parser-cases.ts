import type { ParserContender } from './parser-contender.js';
import type { SampleMessage } from './sample-messages.js';
import { batchForOneMillisecond, median, timeParser, type TimedRun } from './throughput.js';
import { fieldMismatches, type UasFields } from './uas-fields.js';

export interface TimingPlan {
  /** Untimed running of every parser on every message first, so the JIT has settled. */
  warmupMs: number;
  rounds: number;
  roundMs: number;
}

/** One parser on one message: timed, or the reason it was not. */
export interface ParserCase {
  message: string;
  parser: ParserContender['id'] | 'decode';
  status: 'ok' | 'failed' | 'wrong';
  detail?: string;
  /** Median over the rounds. */
  nsPerMessage?: number;
  messagesPerSecond?: number;
  roundsNsPerMessage?: number[];
  /** Per round, see TimedRun.cpuShare. */
  roundsCpuShare?: number[];
}

type Runner = { id: ParserCase['parser']; read: (bytes: Buffer) => UasFields };

/**
 * Checks every parser's fields on every message, then times the ones that read them right.
 * Rounds go round-robin over parsers and messages, so a burst of other work on the machine
 * lands on all of them rather than on one. A reference row times the UTF-8 decode alone, which
 * the two string-based parsers include.
 */
export function runParserCases(
  contenders: readonly ParserContender[],
  messages: readonly SampleMessage[],
  plan: TimingPlan,
): ParserCase[] {
  const cases: ParserCase[] = [];
  const timed: Array<{ runner: Runner; sample: SampleMessage; result: ParserCase }> = [];
  for (const sample of messages) {
    for (const runner of [...contenders, decodeOnly(sample)]) {
      const result: ParserCase = { message: sample.name, parser: runner.id, status: 'ok' };
      cases.push(result);
      if (checked(runner, sample, result)) timed.push({ runner, sample, result });
    }
  }
  const batches = new Map<ParserCase, number>();
  for (const { runner, sample, result } of timed) {
    const warmup = timeParser(runner.read, sample.bytes, sample.expected, plan.warmupMs);
    if (settled(result, warmup)) batches.set(result, batchForOneMillisecond(warmup));
  }
  const rounds = new Map<ParserCase, TimedRun[]>();
  for (let round = 0; round < plan.rounds; round++) {
    for (const { runner, sample, result } of timed) {
      if (result.status !== 'ok') continue;
      const { bytes, expected } = sample;
      const run = timeParser(runner.read, bytes, expected, plan.roundMs, batches.get(result));
      if (!settled(result, run)) continue;
      rounds.set(result, [...(rounds.get(result) ?? []), run]);
    }
  }
  for (const [result, runs] of rounds) {
    if (result.status !== 'ok') continue;
    const nsPerMessage = runs.map((run) => run.nanoseconds / run.messages);
    const ns = median(nsPerMessage);
    result.nsPerMessage = Math.round(ns);
    result.messagesPerSecond = Math.round(1e9 / ns);
    result.roundsNsPerMessage = nsPerMessage.map(Math.round);
    result.roundsCpuShare = runs.map((run) => Math.round(run.cpuShare * 100) / 100);
  }
  return cases;
}

function checked(runner: Runner, sample: SampleMessage, result: ParserCase): boolean {
  try {
    const wrong = fieldMismatches(runner.read(sample.bytes), sample.expected);
    if (wrong.length === 0) return true;
    Object.assign(result, { status: 'wrong', detail: wrong.join('; ') });
  } catch (error) {
    Object.assign(result, { status: 'failed', detail: String(error) });
  }
  return false;
}

function settled(result: ParserCase, run: TimedRun): boolean {
  if (run.digestMatched) return true;
  Object.assign(result, { status: 'wrong', detail: 'fields changed between iterations' });
  return false;
}

function decodeOnly(sample: SampleMessage): Runner {
  const length = sample.bytes.length;
  return {
    id: 'decode',
    read(bytes) {
      if (bytes.toString('utf8').length !== length) throw new Error('decoded length differs');
      return sample.expected;
    },
  };
}
