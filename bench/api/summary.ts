import { SERVER_LABELS, type BenchCase, type ServerKind } from './bench-run.js';

const PAIRS: Array<[ServerKind, ServerKind]> = [
  ['embedded', 'bare-fastify'],
  ['redis', 'bare-fastify'],
  ['redis', 'embedded'],
];

/**
 * Two lines per route, e.g. "embedded store = 0.61x bare fastify": requests/s, and CPU per
 * request (server and Redis together), which holds up better when the loader is the limit.
 */
export function summaryLines(cases: BenchCase[]): string[] {
  const routes = [...new Set(cases.map((c) => c.route))];
  return routes.flatMap((route) => {
    const ratios = (metric: 'requestsPerSecond' | 'totalCpuMicrosPerRequest') => {
      const value = (kind: ServerKind) =>
        cases.find((c) => c.route === route && c.server === kind)?.[metric] ?? NaN;
      return PAIRS.map(
        ([server, against]) =>
          `${SERVER_LABELS[server]} = ${(value(server) / value(against)).toFixed(2)}x ${SERVER_LABELS[against]}`,
      ).join(', ');
    };
    return [
      `${route} req/s: ${ratios('requestsPerSecond')}`,
      `${route} CPU per request: ${ratios('totalCpuMicrosPerRequest')}`,
    ];
  });
}
