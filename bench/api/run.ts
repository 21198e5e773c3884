/**
 * How fast does the REST API read endpoints, on Redis and on the embedded store, against a bare
 * Fastify server sending the same bytes on the same machine?
 *
 *   npm run bench:api
 *
 * Builds the gateway, runs it as a separate process per store, seeds it through the REST API and
 * loads both read routes with autocannon; prints a table and writes bench/results/api-*.json.
 */
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedis } from '../../test/support/redis-server.js';
import { startBareServer } from './bare-server-process.js';
import { startGatewayProcess } from './gateway-process.js';
import { measureLoad, type LoadFigures, type LoadOptions, type LoadTarget } from './load.js';
import { describeMachine } from './machine.js';
import { processCpuSeconds } from './process-cpu.js';
import { RedisProbe } from './redis-probe.js';
import type { ApiBenchRun, ServerKind } from './bench-run.js';
import { reportRun } from './report.js';
import { describeRevision } from './revision.js';
import { summaryLines } from './summary.js';
import { ENDPOINT, seedRecords, type SeededPaths } from './seed.js';
import type { ServerProcess } from './server-process.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const RECORDS = 200;
/** The API's default page size: what `GET .../Endpoint/` without parameters returns. */
const LIST_PAGE_SIZE = 20;
const LOAD: LoadOptions = { connections: 50, durationSeconds: 10, warmupSeconds: 2 };
const ROUTES = {
  detail: `GET /v1/Account/{id}/${ENDPOINT.name}/{${ENDPOINT.idField}}/`,
  list: `GET /v1/Account/{id}/${ENDPOINT.name}/`,
};

interface RouteFigures {
  detail: LoadFigures;
  list: LoadFigures;
}

interface Stoppable {
  stop(): Promise<void>;
}

/** Everything started and not yet stopped; all of it is stopped on exit, error or Ctrl-C. */
const running = new Set<Stoppable>();

async function started<T extends Stoppable>(starting: Promise<T>): Promise<T> {
  const thing = await starting;
  running.add(thing);
  return thing;
}

async function stopped(thing: Stoppable): Promise<void> {
  running.delete(thing);
  await thing.stop();
}

async function stopAll(): Promise<void> {
  for (const thing of [...running].reverse()) await stopped(thing).catch(() => {});
}

function build(): void {
  console.log('building the gateway (tsc -p tsconfig.build.json)');
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`the build failed:\n${result.stdout}${result.stderr}`);
}

function loadTarget(server: ServerProcess, redis: RedisProbe | null = null): LoadTarget {
  return {
    baseUrl: server.baseUrl,
    cpuSeconds: async () => ({
      server: processCpuSeconds(server.pid),
      redis: redis ? await redis.cpuSeconds() : null,
    }),
  };
}

async function measureRoutes(
  server: ServerProcess,
  seeded: SeededPaths,
  authorization: string,
  redis: RedisProbe | null = null,
): Promise<RouteFigures> {
  const target = loadTarget(server, redis);
  const headers = { authorization };
  console.log(`${server.name}: ${ROUTES.detail}`);
  const detail = await measureLoad(target, seeded.detailPaths, headers, LOAD);
  console.log(`${server.name}: ${ROUTES.list}`);
  const list = await measureLoad(target, [seeded.listPath], headers, LOAD);
  return { detail, list };
}

/** Seeds a gateway on one store and loads both routes; returns the paths for the baseline. */
async function measureGateway(
  redis: { url: string; probe: RedisProbe } | null,
): Promise<RouteFigures & { seeded: SeededPaths; authorization: string }> {
  const gateway = await started(startGatewayProcess({ redisUrl: redis?.url ?? null }));
  console.log(`${gateway.name}: seeding ${RECORDS} records`);
  const seeded = await seedRecords(gateway, ENDPOINT, RECORDS);
  await redis?.probe.expectKeys();
  const figures = await measureRoutes(gateway, seeded, gateway.authorization, redis?.probe);
  await stopped(gateway);
  return { ...figures, seeded, authorization: gateway.authorization };
}

async function measureBare(seeded: SeededPaths, authorization: string): Promise<RouteFigures> {
  const bare = await started(startBareServer({ detail: seeded.detailBody, list: seeded.listBody }));
  // The gateway's requests byte for byte, Authorization included; the bare server ignores it.
  const figures = await measureRoutes(bare, seeded, authorization);
  await stopped(bare);
  return figures;
}

async function measureAll(): Promise<Record<ServerKind, RouteFigures>> {
  const embedded = await measureGateway(null);
  const redisServer = await started(startRedis());
  const probe = await started(RedisProbe.connect(redisServer.url));
  const redis = await measureGateway({ url: redisServer.url, probe });
  await stopped(probe);
  await stopped(redisServer);
  const bare = await measureBare(embedded.seeded, embedded.authorization);
  return { 'bare-fastify': bare, embedded, redis };
}

async function main(): Promise<void> {
  const machine = describeMachine();
  const date = new Date().toISOString();
  const revision = describeRevision(ROOT);
  build();
  const figures = await measureAll();
  const cases = (['detail', 'list'] as const).flatMap((route) =>
    (['bare-fastify', 'embedded', 'redis'] as const).map((server) => {
      const mine = figures[server][route];
      const bare = figures['bare-fastify'][route];
      return {
        route: ROUTES[route],
        server,
        ...mine,
        ratioToBare: Math.round((mine.requestsPerSecond / bare.requestsPerSecond) * 100) / 100,
      };
    }),
  );
  const run: ApiBenchRun = {
    benchmark: 'api',
    date,
    machine,
    revision,
    loadAverageAfter: loadavg().map((n) => Math.round(n * 100) / 100),
    settings: { ...LOAD, records: RECORDS, listPageSize: LIST_PAGE_SIZE },
    clean: cases.every((c) => c.errors === 0 && Object.keys(c.non2xx).length === 0),
    cases,
    summary: summaryLines(cases),
  };
  const written = reportRun(run, RESULTS_DIR);
  console.log(`\nwrote ${written.join(', ')}`);
  if (!run.clean) process.exitCode = 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAll().then(() => process.exit(130));
  });
}

try {
  await main();
} catch (error) {
  console.error(`bench:api failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
} finally {
  await stopAll();
}
