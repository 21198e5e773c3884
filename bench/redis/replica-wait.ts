/**
 * What waiting for replicas (Redis WAIT, VOXGATE_REDIS_WAIT=replicas) costs a store write: the
 * latency of one write alone and the writes per second of 32 writers at once, with and without
 * WAIT, on a master with one replica and on a three-master Cluster with a replica each, all on
 * loopback. Prints a table and writes bench/results/redis-wait-*.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DocumentEntry } from '../../src/state/document-store.js';
import { RedisStore } from '../../src/state/redis-store.js';
import {
  startRedisCluster,
  startRedisProcess,
  waitForOnlineReplica,
} from '../../test/support/redis-cluster.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const SEQUENTIAL = 2000;
const CONCURRENT = { writers: 32, writesEach: 200 };

interface Figures {
  p50Ms: number;
  p99Ms: number;
  writesPerSecond: number;
}

/** A document like an endpoint's: two indexes and a unique key (in a slot of its own). */
const entry = (id: string, score: number): DocumentEntry => ({
  score,
  indexes: ['sub:SA1'],
  unique: [{ space: 'user', value: id }],
});

async function measure(url: string, waitForReplicas: boolean): Promise<Figures> {
  const store = RedisStore.connect(url, { waitForReplicas });
  const run = `${waitForReplicas ? 'w' : 'n'}${Date.now()}`;
  const times: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const started = process.hrtime.bigint();
    await store.put('bench', 'MABENCH', `${run}-${i}`, { i }, entry(`${run}-${i}`, i));
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  times.sort((a, b) => a - b);
  const started = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENT.writers }, async (_, w) => {
      for (let i = 0; i < CONCURRENT.writesEach; i++)
        await store.put(
          'bench',
          'MABENCH',
          `${run}-c${w}-${i}`,
          { i },
          entry(`${run}-c${w}-${i}`, i),
        );
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  await store.close();
  return {
    p50Ms: round(times[Math.floor(times.length * 0.5)]!),
    p99Ms: round(times[Math.floor(times.length * 0.99)]!),
    writesPerSecond: Math.round((CONCURRENT.writers * CONCURRENT.writesEach) / seconds),
  };
}

const round = (n: number) => Math.round(n * 1000) / 1000;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-bench-redis-'));
  const master = await startRedisProcess(join(dir, 'm'), ['--appendonly', 'no']);
  const replica = await startRedisProcess(join(dir, 'r'), [
    '--replicaof',
    '127.0.0.1',
    String(master.port),
  ]);
  await waitForOnlineReplica(master);
  const cluster = await startRedisCluster({ replicas: 1 });
  const server = `redis://127.0.0.1:${master.port}`;
  const results = {
    serverWithReplica: {
      noWait: await measure(server, false),
      wait: await measure(server, true),
    },
    clusterWithReplicas: {
      noWait: await measure(cluster.url, false),
      wait: await measure(cluster.url, true),
    },
  };
  await Promise.all([master.kill(), replica.kill(), cluster.stop()]);
  rmSync(dir, { recursive: true, force: true });
  console.table(
    Object.entries(results).flatMap(([setup, byMode]) =>
      Object.entries(byMode).map(([mode, f]) => ({ setup, mode, ...f })),
    ),
  );
  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = new Date()
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
  const body = JSON.stringify({ at: new Date().toISOString(), ...results }, null, 2);
  writeFileSync(join(RESULTS_DIR, `redis-wait-${stamp}.json`), body);
  writeFileSync(join(RESULTS_DIR, 'redis-wait-latest.json'), body);
}

await main();
