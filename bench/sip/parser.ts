/**
 * How fast does voxgate parse SIP, against sip.js's parser and drachtio-srf's, on the same bytes?
 *
 *   npm run bench:sip-parser [-- --rounds 7 --round-ms 400 --warmup-ms 500]
 *
 * Every parser gets a typical INVITE with SDP and the 200 OK to it as a Buffer, and must both
 * parse it and read what a UAS needs from every message (see uas-fields.ts); a parser that
 * throws or reads a wrong value is reported, not timed. Prints a table and writes
 * bench/results/sip-parser-*.json with the machine and its load.
 */
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describeMachine } from '../api/machine.js';
import { describeRevision } from '../api/revision.js';
import { DRACHTIO_CONTENDER } from './drachtio-contender.js';
import { runParserCases, type ParserCase, type TimingPlan } from './parser-cases.js';
import { reportParserRun, type ParserRatio, type SipParserRun } from './parser-report.js';
import { SAMPLE_MESSAGES } from './sample-messages.js';
import { timingPlanFromArgs } from '../media/frame-timing.js';
import { SIPJS_CONTENDER } from './sipjs-contender.js';
import { VOXGATE_CONTENDER } from './voxgate-contender.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
/** issue 3: at least three times the faster of sip.js and drachtio-srf. */
const GOAL = 3;

const timingPlan = (): TimingPlan => timingPlanFromArgs({ roundMs: 400, warmupMs: 500 });

function ratio(cases: ParserCase[], message: string): ParserRatio {
  const speed = (id: ParserCase['parser']) =>
    cases.find((c) => c.message === message && c.parser === id)?.messagesPerSecond;
  const alternatives = (['sipjs', 'drachtio'] as const).filter((id) => speed(id) !== undefined);
  const fastest = alternatives.sort((a, b) => speed(b)! - speed(a)!)[0] ?? null;
  const ours = speed('voxgate');
  const value = fastest === null || ours === undefined ? null : ours / speed(fastest)!;
  return {
    message,
    fastestAlternative: fastest,
    voxgateVsFastest: value === null ? null : Math.round(value * 100) / 100,
    goal: GOAL,
    met: value === null ? null : value >= GOAL,
  };
}

function main(): void {
  const plan = timingPlan();
  const contenders = [VOXGATE_CONTENDER, SIPJS_CONTENDER, DRACHTIO_CONTENDER];
  const machine = describeMachine();
  const date = new Date().toISOString();
  const cases = runParserCases(contenders, SAMPLE_MESSAGES, plan);
  const run: SipParserRun = {
    benchmark: 'sip-parser',
    date,
    machine,
    revision: describeRevision(ROOT),
    loadAverageAfter: loadavg().map((n) => Math.round(n * 100) / 100),
    plan,
    inputs: SAMPLE_MESSAGES.map((m) => ({ message: m.name, bytes: m.bytes.length })),
    parsers: contenders.map(({ id, label, version, entry, eagerness }) => ({
      id,
      label,
      version,
      entry,
      eagerness,
    })),
    cases,
    ratios: SAMPLE_MESSAGES.map((m) => ratio(cases, m.name)),
  };
  for (const file of reportParserRun(run, RESULTS_DIR)) console.log(`wrote ${file}`);
}

main();
