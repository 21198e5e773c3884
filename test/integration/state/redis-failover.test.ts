import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailable } from '../../../src/core/errors.js';
import { RedisStore } from '../../../src/state/redis-store.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import {
  startRedisCluster,
  startRedisProcess,
  waitFor,
  type RedisCluster,
  type RedisProcess,
} from '../../support/redis-cluster.js';
import { startRedisSentinelSet, type RedisSentinelSet } from '../../support/redis-sentinel.js';

const MAIN = 'MA' + 'FAILOVER'.repeat(2) + 'AB';
const env = { VOXGATE_AUTH_ID: MAIN, VOXGATE_AUTH_TOKEN: 'f'.repeat(40) };

/**
 * The replicas' first sync starts at once instead of after Redis's default five-second wait
 * for more replicas (repl-diskless-sync-delay): the sets are ready seconds sooner. The failover
 * tests below start only once every replica is in sync, as before, so what they prove is the
 * same; the initial-sync test sets its own delay to catch a replica in that wait.
 */
const SYNC_AT_ONCE = ['--repl-diskless-sync-delay', '0'];

/** A REST request should never wait longer than this, outage or not. */
const LONGEST_ANSWER_MS = 5000;

interface Answer {
  kind: 'Application' | 'Endpoint';
  status: number;
  ms: number;
  id: string | undefined;
  afterKill: boolean;
  error: string | undefined;
}

/**
 * Creates applications and endpoints (an endpoint also claims its username, a key of its own
 * slot) one after another through the gateway, kills the Redis master `kill` names after a few
 * are stored, and goes on until several have been stored after the failover.
 */
async function trafficAcrossFailover(
  gw: TestGateway,
  kill: () => Promise<void>,
): Promise<Answer[]> {
  const answers: Answer[] = [];
  let killedAt: number | null = null;
  const deadline = Date.now() + 45_000;
  for (let i = 0; Date.now() < deadline; i++) {
    const storedAfter = answers.filter((a) => a.afterKill && a.status === 201).length;
    if (storedAfter >= 6) break;
    if (killedAt === null && answers.filter((a) => a.status === 201).length >= 10) {
      await kill();
      killedAt = Date.now();
    }
    const kind = i % 2 === 0 ? 'Application' : 'Endpoint';
    const body =
      kind === 'Application'
        ? { app_name: `app-${i}`, answer_url: 'https://example.com/answer' }
        : { username: `user${i}`, password: 'Sup3r-Secret-Pw', alias: `alias-${i}` };
    const started = Date.now();
    const res = await gw.request('POST', `/v1/Account/${MAIN}/${kind}/`, { json: body });
    answers.push({
      kind,
      status: res.status,
      ms: Date.now() - started,
      id: kind === 'Application' ? res.body?.app_id : res.body?.endpoint_id,
      afterKill: killedAt !== null,
      error: res.body?.error,
    });
    // Paced like a client that retries after an error, not a tight loop.
    await new Promise((r) => setTimeout(r, res.status === 201 ? 10 : 100));
  }
  return answers;
}

async function expectNothingLost(gw: TestGateway, answers: Answer[]): Promise<void> {
  const summary = {
    stored: answers.filter((a) => a.status === 201).length,
    unavailable: answers.filter((a) => a.status === 503).length,
    slowestMs: Math.max(...answers.map((a) => a.ms)),
    // Every status and the first error of each, so that a failure below says what came back.
    byStatus: Object.fromEntries(
      [...new Set(answers.map((a) => a.status))].map((status) => {
        const those = answers.filter((a) => a.status === status);
        return [
          status,
          {
            count: those.length,
            afterKill: those.filter((a) => a.afterKill).length,
            error: those[0]!.error,
          },
        ];
      }),
    ),
  };
  console.log(`failover traffic: ${JSON.stringify(summary)}`);
  expect(
    answers.filter((a) => a.afterKill && a.status === 201).length,
    JSON.stringify(summary),
  ).toBeGreaterThanOrEqual(6);
  for (const answer of answers) {
    // Stored, or refused with the message that says to try again: never a 500 or a hang.
    expect([201, 503], JSON.stringify(answer)).toContain(answer.status);
    expect(answer.ms, JSON.stringify(answer)).toBeLessThan(LONGEST_ANSWER_MS);
    if (answer.status === 503) expect(answer.error).toMatch(/state store \(Redis\) is unavailable/);
  }
  for (const answer of answers.filter((a) => a.status === 201)) {
    const got = await gw.request('GET', `/v1/Account/${MAIN}/${answer.kind}/${answer.id}/`);
    expect(got.status, JSON.stringify(answer)).toBe(200);
  }
}

describe('Redis Cluster failover (three masters, a replica each)', () => {
  let cluster: RedisCluster;
  let gw: TestGateway;
  beforeAll(async () => {
    cluster = await startRedisCluster({ replicas: 1, serverArgs: SYNC_AT_ONCE });
    gw = await startGateway({ redisUrl: cluster.url, env });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await cluster?.stop();
  });

  it('loses no acknowledged record when the master of the account slot is killed', async () => {
    const answers = await trafficAcrossFailover(gw, async () => {
      // The master holding the main account's documents and indexes (its hash tag).
      const master = await cluster.masterOf(`{${MAIN}}`);
      await master.kill();
    });
    await expectNothingLost(gw, answers);
  }, 75_000);
});

describe('Redis Sentinel failover (one master, one replica, three Sentinels)', () => {
  let set: RedisSentinelSet;
  let gw: TestGateway;
  beforeAll(async () => {
    set = await startRedisSentinelSet({ serverArgs: SYNC_AT_ONCE });
    gw = await startGateway({ redisUrl: set.url, env });
  }, 60_000);
  afterAll(async () => {
    try {
      await gw?.close();
    } finally {
      await set?.stop();
    }
  });

  it('loses no acknowledged record when the master is killed and the replica promoted', async () => {
    const answers = await trafficAcrossFailover(gw, () => set.master.kill());
    expect(await set.currentMasterPort()).toBe(set.replica.port);
    await expectNothingLost(gw, answers);
  }, 75_000);
});

describe('Redis restart (one server, append-only file fsynced on every write)', () => {
  let dir: string;
  let redis: RedisProcess;
  let gw: TestGateway;
  const serverArgs = ['--appendonly', 'yes', '--appendfsync', 'always'];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'voxgate-redis-restart-'));
    redis = await startRedisProcess(dir, serverArgs);
    gw = await startGateway({ redisUrl: `redis://127.0.0.1:${redis.port}`, env });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await redis?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 at once while Redis is down, reconnects by itself, and keeps what it stored', async () => {
    const answers = await trafficAcrossFailover(gw, async () => {
      await redis.kill();
      // Down for a second and a half, then back on the same port with its append-only file.
      setTimeout(() => {
        void startRedisProcess(dir, serverArgs, undefined, redis.port).then((r) => (redis = r));
      }, 1500);
    });
    expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(0);
    await expectNothingLost(gw, answers);
  }, 75_000);
});

describe('A replica in its initial sync (one master, one replica)', () => {
  let dir: string;
  let master: RedisProcess;
  let replica: RedisProcess;
  let store: RedisStore | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'voxgate-redis-sync-'));
    // The master holds a replica's first (diskless) sync back this long, waiting for others.
    master = await startRedisProcess(join(dir, 'master'), ['--repl-diskless-sync-delay', '5']);
    replica = await startRedisProcess(join(dir, 'replica'), [
      '--replicaof',
      '127.0.0.1',
      String(master.port),
    ]);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await replica?.kill();
    await master?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('acknowledges no write the replica does not have, though ROLE does not list it yet', async () => {
    // Connected and waiting for its RDB: a failover could promote it without the write.
    await waitFor(
      async () => String(await master.client.info('replication')).includes('state=wait_bgsave'),
      4000,
    );
    store = RedisStore.connect(`redis://127.0.0.1:${master.port}`, { waitForReplicas: true });
    const entry = { score: 1, indexes: [], unique: [] };
    await expect(store.put('thing', 'T', 'a', { id: 'a' }, entry)).rejects.toBeInstanceOf(
      StoreUnavailable,
    );
  });
});
