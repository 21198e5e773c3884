import type { LoadFigures, LoadOptions } from './load.js';
import type { Machine } from './machine.js';
import type { Revision } from './revision.js';

/** What answered: the baseline, or the gateway on one of its stores. */
export type ServerKind = 'bare-fastify' | 'embedded' | 'redis';

export const SERVER_LABELS: Record<ServerKind, string> = {
  'bare-fastify': 'bare fastify',
  embedded: 'embedded store',
  redis: 'redis',
};

export interface BenchCase extends LoadFigures {
  route: string;
  server: ServerKind;
  /** requests/s divided by bare fastify's on the same route in the same run. */
  ratioToBare: number;
}

/** One run of bench:api, as written to bench/results/api-*.json. */
export interface ApiBenchRun {
  benchmark: 'api';
  date: string;
  machine: Machine;
  revision: Revision;
  loadAverageAfter: number[];
  settings: LoadOptions & { records: number; listPageSize: number };
  /** False when any request failed or answered outside 2xx: the figures are then meaningless. */
  clean: boolean;
  cases: BenchCase[];
  /** The ratios, e.g. "embedded store = 0.61x bare fastify". */
  summary: string[];
}
