import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisProcess, waitFor, type RedisProcess } from './redis-cluster.js';

export interface RedisSentinelSet {
  /** `redis+sentinel://s1,s2,s3/voxgate`. */
  url: string;
  master: RedisProcess;
  replica: RedisProcess;
  sentinels: RedisProcess[];
  /** The port of the master the Sentinels name now. */
  currentMasterPort(): Promise<number>;
  stop(): Promise<void>;
}

export const SENTINEL_MASTER_NAME = 'voxgate';

/**
 * One master, one replica and three Sentinels (quorum two) from Debian's redis-server and
 * redis-sentinel, on loopback random ports. The master is declared down after one second
 * without an answer, so a failover completes within about three.
 */
export async function startRedisSentinelSet(): Promise<RedisSentinelSet> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-redis-sentinel-'));
  const master = await startRedisProcess(join(dir, 'master'), ['--appendonly', 'no']);
  const replica = await startRedisProcess(join(dir, 'replica'), [
    '--appendonly',
    'no',
    '--replicaof',
    '127.0.0.1',
    String(master.port),
  ]);
  await waitFor(async () => {
    const info = String(await replica.client.info('replication'));
    return info.includes('master_link_status:up');
  }, 10_000);
  const sentinels = await Promise.all(
    [0, 1, 2].map((i) =>
      startRedisProcess(
        join(dir, `sentinel-${i}`),
        [],
        [
          `sentinel monitor ${SENTINEL_MASTER_NAME} 127.0.0.1 ${master.port} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_MASTER_NAME} 1000`,
          `sentinel failover-timeout ${SENTINEL_MASTER_NAME} 5000`,
          `sentinel parallel-syncs ${SENTINEL_MASTER_NAME} 1`,
        ],
      ),
    ),
  );
  const currentMasterPort = async () => {
    const [, port] = (await sentinels[0]!.client.call(
      'SENTINEL',
      'GET-MASTER-ADDR-BY-NAME',
      SENTINEL_MASTER_NAME,
    )) as [string, string];
    return Number(port);
  };
  // Every Sentinel has found the replica and the other Sentinels, so a failover can be agreed.
  await waitFor(async () => {
    for (const sentinel of sentinels) {
      const state = (await sentinel.client.call(
        'SENTINEL',
        'MASTER',
        SENTINEL_MASTER_NAME,
      )) as string[];
      const field = (name: string) => Number(state[state.indexOf(name) + 1]);
      if (field('num-slaves') < 1 || field('num-other-sentinels') < 2) return false;
    }
    return true;
  }, 15_000);
  return {
    url: `redis+sentinel://${sentinels
      .map((s) => `127.0.0.1:${s.port}`)
      .join(',')}/${SENTINEL_MASTER_NAME}`,
    master,
    replica,
    sentinels,
    currentMasterPort,
    stop: async () => {
      await Promise.all([master, replica, ...sentinels].map((p) => p.kill()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
