import type { Cluster, Redis } from 'ioredis';
import { openRedis, type RedisClient } from '../state/redis-connection.js';
import { parseRedisTarget, type RedisTarget } from '../state/redis-target.js';
import { fail, ok, reason, warn, type CheckResult } from './check-result.js';

const REDIS_TIMEOUT_MS = 4000;
const README_PERSISTENCE = "docs/redis-and-clusters.md, Redis: 'Nothing acknowledged is lost'";

/** Where the URL points, without its credentials. */
export function describeTarget(target: RedisTarget): string {
  const list = (nodes: { host: string; port: number }[]) =>
    nodes.map((n) => `${n.host}:${n.port}`).join(',');
  switch (target.kind) {
    case 'server': {
      const url = new URL(target.url);
      return `${url.protocol}//${url.host}${url.pathname.length > 1 ? url.pathname : ''}`;
    }
    case 'cluster':
      return `cluster ${list(target.nodes)}`;
    case 'sentinel':
      return `master ${target.masterName} of sentinels ${list(target.sentinels)}`;
  }
}

interface Persistence {
  node: string;
  appendonly: string;
  appendfsync: string;
  save: string;
}

/**
 * Connects the way the gateway does (openRedis), asks PING, and reads the persistence
 * settings of every data node that takes writes: `redis` and `redis-persistence` lines.
 */
export async function checkRedis(url: string): Promise<CheckResult[]> {
  const target = parseRedisTarget(url);
  const where = describeTarget(target);
  const client = openRedis(target, { purpose: 'store', timeoutMs: REDIS_TIMEOUT_MS });
  let lastError: string | null = null;
  client.on('error', (error: Error) => (lastError = reason(error)));
  try {
    const version = await within(REDIS_TIMEOUT_MS, async () => {
      await client.ping();
      return /redis_version:(\S+)/.exec(await client.info('server'))?.[1] ?? 'unknown';
    });
    const reached = ok('redis', `${where} answers PING (Redis ${version})`);
    try {
      const settings = await within(REDIS_TIMEOUT_MS, () => persistence(client, target));
      return [reached, judgePersistence(settings)];
    } catch (error) {
      return [
        reached,
        warn(
          'redis-persistence',
          `could not read appendonly and save (CONFIG GET: ${reason(error)}): check them on ` +
            `the server (${README_PERSISTENCE})`,
        ),
      ];
    }
  } catch (error) {
    return [
      fail(
        'redis',
        `cannot reach ${where} within ${REDIS_TIMEOUT_MS / 1000} s (${lastError ?? reason(error)}): ` +
          `start Redis or correct VOXGATE_REDIS_URL`,
      ),
    ];
  } finally {
    client.disconnect();
  }
}

async function persistence(client: RedisClient, target: RedisTarget): Promise<Persistence[]> {
  const nodes: Redis[] =
    target.kind === 'cluster' ? (client as Cluster).nodes('master') : [client as Redis];
  return Promise.all(
    nodes.map(async (node) => {
      const read = async (name: string) =>
        ((await node.call('CONFIG', 'GET', name)) as string[])[1] ?? '';
      return {
        node: `${node.options.host}:${node.options.port}`,
        appendonly: await read('appendonly'),
        appendfsync: await read('appendfsync'),
        save: await read('save'),
      };
    }),
  );
}

/** The worst node decides; README's advice is `appendonly yes` with `appendfsync always`. */
export function judgePersistence(nodes: Persistence[]): CheckResult {
  const name = 'redis-persistence';
  const on = (p: Persistence) => (nodes.length > 1 ? ` on ${p.node}` : '');
  const none = nodes.find((p) => p.appendonly !== 'yes' && p.save.trim() === '');
  if (none)
    return warn(
      name,
      `appendonly no and no save${on(none)}: a restarted Redis comes back empty; set appendonly ` +
        `yes with appendfsync always (${README_PERSISTENCE})`,
    );
  const snapshots = nodes.find((p) => p.appendonly !== 'yes');
  if (snapshots)
    return warn(
      name,
      `appendonly no${on(snapshots)}, RDB snapshots only (save ${snapshots.save}): writes since ` +
        `the last snapshot are lost on a restart; set appendonly yes with appendfsync always ` +
        `(${README_PERSISTENCE})`,
    );
  const lazy = nodes.find((p) => p.appendfsync !== 'always');
  if (lazy)
    return warn(
      name,
      `appendonly yes with appendfsync ${lazy.appendfsync}${on(lazy)}: a power cut may lose ` +
        `acknowledged writes; set appendfsync always (${README_PERSISTENCE})`,
    );
  return ok(
    name,
    `appendonly yes, appendfsync always${nodes.length > 1 ? ` on all ${nodes.length} masters` : ''}`,
  );
}

async function within<T>(ms: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
