import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeRunContext, type Machine } from '../api/machine.js';
import type { Revision } from '../api/revision.js';
import type { ParserCase, TimingPlan } from './parser-cases.js';
import type { ParserContender } from './parser-contender.js';

/** voxgate's parser against the faster of the other two, for one message. */
export interface ParserRatio {
  message: string;
  fastestAlternative: ParserContender['id'] | null;
  /** voxgate messages/s divided by the fastest alternative's; null when either did not run. */
  voxgateVsFastest: number | null;
  goal: number;
  met: boolean | null;
}

/** Everything `bench:sip-parser` measured, as written to bench/results/. */
export interface SipParserRun {
  benchmark: 'sip-parser';
  date: string;
  machine: Machine;
  revision: Revision;
  loadAverageAfter: number[];
  plan: TimingPlan;
  inputs: Array<{ message: string; bytes: number }>;
  parsers: Array<Omit<ParserContender, 'read'>>;
  cases: ParserCase[];
  ratios: ParserRatio[];
}

const LABELS: Record<ParserCase['parser'], string> = {
  voxgate: 'voxgate',
  sipjs: 'sip.js',
  drachtio: 'drachtio-srf',
  decode: '(utf8 decode only)',
};

/** Prints the table and writes `sip-parser-<date>.json` and `sip-parser-latest.json`. */
export function reportParserRun(run: SipParserRun, resultsDir: string): string[] {
  console.log(describe(run));
  mkdirSync(resultsDir, { recursive: true });
  const json = JSON.stringify(run, null, 2) + '\n';
  const stamp = run.date.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
  const written = [
    join(resultsDir, `sip-parser-${stamp}.json`),
    join(resultsDir, 'sip-parser-latest.json'),
  ];
  for (const file of written) writeFileSync(file, json);
  return written;
}

function describe(run: SipParserRun): string {
  const p = run.plan;
  const out = [
    '',
    `SIP message parsing, ${run.date}`,
    ...describeRunContext(run),
    `inputs: ${run.inputs.map((i) => `${i.message} ${i.bytes} B`).join(', ')}; median of ` +
      `${p.rounds} rounds of ${p.roundMs} ms after ${p.warmupMs} ms warm-up per case`,
    'each parse starts from a Buffer and reads method or status, request-URI user and host, top ' +
      'Via branch, From and To tags, Call-ID, CSeq number and method, body',
    '',
  ];
  const header = [
    'message',
    'parser',
    'messages/s',
    'ns/message',
    'rounds ns (min..max)',
    'min cpu/wall',
    'status',
  ];
  const rows = run.cases.map((c) => [
    c.message,
    LABELS[c.parser],
    c.messagesPerSecond?.toLocaleString('en-US') ?? '-',
    c.nsPerMessage?.toLocaleString('en-US') ?? '-',
    c.roundsNsPerMessage
      ? `${Math.min(...c.roundsNsPerMessage)}..${Math.max(...c.roundsNsPerMessage)}`
      : '-',
    c.roundsCpuShare ? `${Math.round(Math.min(...c.roundsCpuShare) * 100)}%` : '-',
    c.status === 'ok' ? 'ok' : `${c.status}: ${c.detail ?? ''}`,
  ]);
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((cell, i) =>
        i >= 2 && i <= 5 && i !== 4 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!),
      )
      .join('  ')
      .trimEnd();
  out.push(line(header), ...rows.map(line), '');
  for (const r of run.ratios) {
    out.push(
      r.voxgateVsFastest === null
        ? `${r.message}: voxgate vs fastest alternative: not measured`
        : `${r.message}: voxgate ${r.voxgateVsFastest.toFixed(2)}x ${LABELS[r.fastestAlternative!]} ` +
            `(goal ${r.goal}x: ${r.met ? 'met' : 'not met'})`,
    );
  }
  return out.join('\n');
}
