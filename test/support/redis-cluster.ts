import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';

const run = promisify(execFile);

/** One redis-server process of a test deployment (cluster node, Sentinel master or replica). */
export interface RedisProcess {
  port: number;
  child: ChildProcess;
  /** A client on this server alone (no cluster or sentinel logic). */
  client: Redis;
  /** SIGKILL, as a crashed host: no goodbye to replicas or peers. */
  kill(): Promise<void>;
}

export interface RedisCluster {
  /** `redis+cluster://` with every master as a seed. */
  url: string;
  nodes: RedisProcess[];
  /** The master serving the slot of `key` now. */
  masterOf(key: string): Promise<RedisProcess>;
  /** Empties every master (replicas follow). */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A Redis Cluster of three masters (and one replica each when asked) on loopback random ports,
 * from Debian's redis-server, joined with `redis-cli --cluster create`. A short node timeout
 * lets a replica take over a killed master within about two seconds. `serverArgs` are added to
 * every node's command line (e.g. `--repl-diskless-sync-delay 0`: a replica's first sync then
 * starts at once instead of after Redis's default five seconds).
 */
export async function startRedisCluster(
  options: { replicas?: 0 | 1; serverArgs?: string[] } = {},
): Promise<RedisCluster> {
  const replicas = options.replicas ?? 0;
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-redis-cluster-'));
  const count = 3 * (1 + replicas);
  const nodes = await Promise.all(
    Array.from({ length: count }, async (_, i) =>
      startRedisProcess(join(dir, String(i)), [
        '--cluster-enabled',
        'yes',
        // The bus port is a free one too, not the default client port + 10000.
        '--cluster-port',
        String(await freePort()),
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '1000',
        // A replica is promoted however long it was cut off: tests kill masters at will.
        '--cluster-replica-validity-factor',
        '0',
        ...(options.serverArgs ?? []),
      ]),
    ),
  );
  await run('redis-cli', [
    '--cluster',
    'create',
    ...nodes.map((n) => `127.0.0.1:${n.port}`),
    '--cluster-replicas',
    String(replicas),
    '--cluster-yes',
  ]);
  await waitFor(async () => {
    for (const node of nodes) {
      const info = await node.client.call('CLUSTER', 'INFO');
      if (!String(info).includes('cluster_state:ok')) return false;
      if ((await node.client.call('CLUSTER', 'SLOTS')) === null) return false;
    }
    if (replicas === 0) return true;
    // Every replica in sync, so that a killed master has someone to hand over to.
    for (const node of nodes) {
      const info = String(await node.client.info('replication'));
      if (/^role:master/m.test(info) && !replicaOnline(info)) return false;
    }
    return true;
  }, 20_000);
  const alive = () => nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null);
  const masters = async () => {
    const result: RedisProcess[] = [];
    for (const node of alive()) {
      const role = (await node.client.call('ROLE')) as [string];
      if (role[0] === 'master') result.push(node);
    }
    return result;
  };
  return {
    url: `redis+cluster://${nodes
      .slice(0, 3)
      .map((n) => `127.0.0.1:${n.port}`)
      .join(',')}`,
    nodes,
    masterOf: async (key) => {
      const slot = calculateSlot(key);
      for (const node of await masters()) {
        const ranges = (await node.client.call('CLUSTER', 'SLOTS')) as [
          number,
          number,
          [string, number],
        ][];
        const owner = ranges.find(([from, to]) => slot >= from && slot <= to);
        if (owner?.[2][1] === node.port) return node;
      }
      throw new Error(`no live master serves slot ${slot}`);
    },
    flush: async () => {
      for (const node of await masters()) await node.client.flushall();
    },
    stop: async () => {
      await Promise.all(nodes.map((n) => n.kill()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts redis-server with `args` in `dir` on a free loopback port and waits for PING; with
 * `sentinel`, redis-sentinel on a config file (which Sentinel rewrites) made of those lines.
 */
export async function startRedisProcess(
  dir: string,
  args: string[],
  sentinel?: string[],
  atPort?: number,
): Promise<RedisProcess> {
  const port = atPort ?? (await freePort());
  mkdirSync(dir, { recursive: true });
  const command = sentinel ? 'redis-sentinel' : 'redis-server';
  let argv = [...args, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir];
  if (sentinel) {
    const file = join(dir, 'sentinel.conf');
    writeFileSync(
      file,
      [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, ...sentinel, ''].join('\n'),
    );
    argv = [file];
  }
  const child = spawn(command, argv, { stdio: 'ignore', cwd: dir });
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {}); // refused while it starts, gone once killed
  await waitFor(async () => {
    if (child.exitCode !== null)
      throw new Error(`${command} exited with ${child.exitCode}; is it installed?`);
    try {
      if (client.status !== 'ready') await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      client.disconnect();
      return false;
    }
  }, 10_000);
  return {
    port,
    child,
    client,
    kill: async () => {
      client.disconnect();
      if (child.exitCode !== null || child.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
    },
  };
}

/**
 * Whether a master (its INFO replication) counts a replica online: its first sync is done. A
 * replica sees its link up a little before that, and one promoted then has none of the data.
 */
export function replicaOnline(info: string): boolean {
  return /^role:master/m.test(info) && /^slave0:.*state=online/m.test(info);
}

/** Waits until `master` has a replica online (see replicaOnline). */
export async function waitForOnlineReplica(
  master: RedisProcess,
  timeoutMs = 10_000,
): Promise<void> {
  await waitFor(
    async () => replicaOnline(String(await master.client.info('replication'))),
    timeoutMs,
  );
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`not ready within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
