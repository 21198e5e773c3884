import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startRedisProcess,
  waitFor,
  waitForOnlineReplica,
  type RedisProcess,
} from './redis-cluster.js';

export interface RedisSentinelSet {
  /** `redis+sentinel://s1,s2,s3/voxgate-<random>`. */
  url: string;
  master: RedisProcess;
  replica: RedisProcess;
  sentinels: RedisProcess[];
  /** The port of the master the Sentinels name now. */
  currentMasterPort(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * The master's name, new for each set: Sentinels left running by a test that could not stop
 * them would otherwise take a later set's servers (a port used again) for their own master.
 */
const masterName = () => `voxgate-${randomBytes(4).toString('hex')}`;

/**
 * One master, one replica and three Sentinels (quorum two) from Debian's redis-server and
 * redis-sentinel, on loopback random ports. The master is declared down after one second
 * without an answer, so a failover completes within about three. `serverArgs` are added to the
 * master's and the replica's command lines (e.g. `--repl-diskless-sync-delay 0`).
 */
export async function startRedisSentinelSet(
  options: { serverArgs?: string[] } = {},
): Promise<RedisSentinelSet> {
  const serverArgs = options.serverArgs ?? [];
  const unlock = await oneSetAtATime();
  const name = masterName();
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-redis-sentinel-'));
  const master = await startRedisProcess(join(dir, 'master'), [
    '--appendonly',
    'no',
    ...serverArgs,
  ]);
  const replica = await startRedisProcess(join(dir, 'replica'), [
    '--appendonly',
    'no',
    ...serverArgs,
    '--replicaof',
    '127.0.0.1',
    String(master.port),
  ]);
  await waitForOnlineReplica(master);
  const sentinels = await Promise.all(
    [0, 1, 2].map((i) =>
      startRedisProcess(
        join(dir, `sentinel-${i}`),
        [],
        [
          `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 5000`,
          `sentinel parallel-syncs ${name} 1`,
        ],
      ),
    ),
  );
  const currentMasterPort = async () => {
    const [, port] = (await sentinels[0]!.client.call(
      'SENTINEL',
      'GET-MASTER-ADDR-BY-NAME',
      name,
    )) as [string, string];
    return Number(port);
  };
  // Every Sentinel has found the replica and the other Sentinels, so a failover can be agreed.
  await waitFor(async () => {
    for (const sentinel of sentinels) {
      const state = (await sentinel.client.call('SENTINEL', 'MASTER', name)) as string[];
      const field = (key: string) => Number(state[state.indexOf(key) + 1]);
      if (field('num-slaves') < 1 || field('num-other-sentinels') < 2) return false;
    }
    return true;
  }, 15_000);
  return {
    url: `redis+sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${name}`,
    master,
    replica,
    sentinels,
    currentMasterPort,
    stop: async () => {
      await Promise.all([master, replica, ...sentinels].map((p) => p.kill()));
      rmSync(dir, { recursive: true, force: true });
      unlock();
    },
  };
}

const LOCK = join(tmpdir(), 'voxgate-redis-sentinel-set.lock');

/**
 * Sentinel sets of test files that run side by side disturb each other's failovers (their
 * Sentinels probe any server that takes a port one of them watched), so one runs at a time:
 * a lock directory across the test processes, taken over when the process holding it is gone.
 */
async function oneSetAtATime(): Promise<() => void> {
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (holderGone()) rmSync(LOCK, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

function holderGone(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
  } catch {
    return false; // being taken right now
  }
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}
