import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NodeRegistry } from '../../../src/cluster/node-registry.js';
import { systemScheduler } from '../../../src/core/scheduler.js';
import { TEST_HEARTBEAT } from '../../support/cluster-heartbeat.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { sleep, until } from '../../support/wait.js';

/**
 * Heartbeats on a real Redis: a node that cannot reach Redis for longer than the node time to
 * live (a failover, a restart) takes no live peer for dead once Redis is back, and still finds
 * a node that really stopped. The nodes have the cluster tests' faster heartbeat.
 */
const { intervalMs, nodeTtlMs } = TEST_HEARTBEAT;
let redis: RedisServer;
const clients: Redis[] = [];
const registries: NodeRegistry[] = [];

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  for (const registry of registries) await registry.stop().catch(() => undefined);
  for (const client of clients) client.disconnect();
  await redis.stop();
});

function node(id: string): { registry: NodeRegistry; client: Redis } {
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  clients.push(client);
  const registry = new NodeRegistry({
    redis: client,
    scheduler: systemScheduler,
    heartbeat: TEST_HEARTBEAT,
    describe: () => ({
      id,
      sip: '127.0.0.1:5060',
      http: '127.0.0.1:8080',
      state: 'active',
      calls: 0,
      binds: [],
      startedAt: 0,
    }),
    onError: () => {},
  });
  registries.push(registry);
  return { registry, client };
}

it('judges no peer dead right after Redis stood still, and finds a node that stopped', async () => {
  const a = node('reg-a');
  const b = node('reg-b');
  const c = node('reg-c');
  await Promise.all([a, b, c].map((n) => n.registry.start()));
  await until(() => a.registry.steady, nodeTtlMs + intervalMs + 2000);
  expect(await a.registry.dead()).toEqual([]);

  // Redis answers no one for longer than a node's time to live, as during a failover.
  const admin = new Redis(redis.url);
  clients.push(admin);
  await admin.call('CLIENT', 'PAUSE', String(nodeTtlMs + 1000), 'ALL');
  // Until a beat after Redis is back has gone through: the beat Redis held up timed out, and
  // the node's requests fail at once until its next one reaches Redis (store-deadline.ts).
  await sleep(nodeTtlMs + 1000 + intervalMs + 300);
  // Every last beat was old when Redis came back; the node knows it cannot judge yet.
  expect(a.registry.steady).toBe(false);
  expect(await a.registry.dead()).toEqual([]);
  expect(await a.registry.isAlive('reg-b')).toBe(true);

  // c stops beating (its connection is gone); a, steady again, finds c dead and b alive.
  c.client.disconnect();
  await until(async () => (await a.registry.dead()).includes('reg-c'), 10_000);
  expect(await a.registry.dead()).toEqual(['reg-c']);
  expect(await a.registry.isAlive('reg-b')).toBe(true);
}, 30_000);

it('asks Redis once about a peer that started after its last beat, then remembers it', async () => {
  const a = node('reg-early');
  await a.registry.start();
  const late = node('reg-late');
  await late.registry.start();
  // Redis's slow log, told to keep every command, lists what was asked with its arguments
  // (newest first); MONITOR's stream raced the heartbeats on a client connection.
  const admin = new Redis(redis.url);
  clients.push(admin);
  await admin.config('SET', 'slowlog-max-len', '1000');
  await admin.config('SET', 'slowlog-log-slower-than', '0');
  await admin.slowlog('RESET');
  expect(await a.registry.isAlive('reg-late')).toBe(true);
  expect(await a.registry.isAlive('reg-late')).toBe(true);
  expect(await a.registry.isAlive('reg-never')).toBe(false);
  const log = (await admin.slowlog('GET', 1000)) as [number, number, number, string[]][];
  await admin.config('SET', 'slowlog-log-slower-than', '10000');
  const commands = log.map(([, , , [name, ...args]]) => [name!.toLowerCase(), ...args].join(' '));
  commands.reverse();
  const asked = commands.filter((c) => c.startsWith('zscore'));
  expect(asked).toEqual([
    'zscore voxgate:{cluster}:heartbeats reg-late',
    'zscore voxgate:{cluster}:heartbeats reg-never',
  ]);
});
