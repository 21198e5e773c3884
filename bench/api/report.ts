import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVER_LABELS, type ApiBenchRun, type BenchCase } from './bench-run.js';
import { describeRunContext } from './machine.js';

const COLUMNS: Array<[string, (c: BenchCase) => string]> = [
  ['server', (c) => SERVER_LABELS[c.server]],
  ['req/s', (c) => c.requestsPerSecond.toFixed(0)],
  ['vs bare', (c) => `${c.ratioToBare.toFixed(2)}x`],
  ['p50 ms', (c) => String(c.latencyP50Ms)],
  ['p99 ms', (c) => String(c.latencyP99Ms)],
  ['max ms', (c) => String(c.latencyMaxMs)],
  ['cpu µs/req', (c) => String(c.serverCpuMicrosPerRequest)],
  [
    '+redis µs/req',
    (c) => (c.redisCpuMicrosPerRequest === null ? '-' : String(c.redisCpuMicrosPerRequest)),
  ],
  ['server cpu', (c) => `${c.serverCpuPercent}%`],
  ['loader cpu', (c) => `${c.loaderCpuPercent}%`],
  ['bytes', (c) => String(c.bytesPerResponse)],
  ['non-2xx', (c) => String(Object.values(c.non2xx).reduce((a, b) => a + b, 0))],
  ['errors', (c) => String(c.errors)],
];

/** Prints the table and writes `api-<date>.json`, and `api-latest.json` when the run is clean. */
export function reportRun(run: ApiBenchRun, resultsDir: string): string[] {
  console.log(describe(run));
  mkdirSync(resultsDir, { recursive: true });
  const json = JSON.stringify(run, null, 2) + '\n';
  const stamp = run.date.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
  const written = [join(resultsDir, `api-${stamp}.json`)];
  if (run.clean) written.push(join(resultsDir, 'api-latest.json'));
  for (const file of written) writeFileSync(file, json);
  return written;
}

function describe(run: ApiBenchRun): string {
  const s = run.settings;
  const out = [
    '',
    `voxgate REST API, ${run.date}`,
    ...describeRunContext(run),
    `${s.connections} connections, ${s.durationSeconds} s per case after ${s.warmupSeconds} s ` +
      `warm-up, ${s.records} records, list pages of ${s.listPageSize}; bytes include headers`,
  ];
  const header = COLUMNS.map(([title]) => title);
  const rows = run.cases.map((c) => COLUMNS.map(([, cell]) => cell(c)));
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  for (const route of new Set(run.cases.map((c) => c.route))) {
    out.push('', route, line(header), widths.map((w) => '-'.repeat(w)).join('  '));
    for (const [i, c] of run.cases.entries()) if (c.route === route) out.push(line(rows[i]!));
  }
  out.push('', ...run.summary);
  if (!run.clean) {
    out.push('', 'NOT CLEAN: some requests failed or answered outside 2xx; the figures are void.');
  }
  return out.join('\n');
}
