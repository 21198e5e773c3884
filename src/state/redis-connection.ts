import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisTarget } from './redis-target.js';

/** A connection to whatever VOXGATE_REDIS_URL names; both kinds take the same commands. */
export type RedisClient = Redis | Cluster;

export interface RedisConnectionOptions {
  /**
   * `store`: a command fails within `timeoutMs` while Redis is unreachable, so a REST request
   * answers 503 instead of waiting. `queue`: BullMQ's connection, whose commands wait for
   * Redis (its workers refuse a connection that gives up: `maxRetriesPerRequest: null`).
   */
  purpose: 'store' | 'queue';
  /** Upper bound on a store command, queued while reconnecting or sent (ms). */
  timeoutMs?: number;
}

export const DEFAULT_REDIS_TIMEOUT_MS = 2000;

/**
 * Opens a client that reconnects by itself, at most a second apart, for as long as it lives:
 * after a restart, a Sentinel failover (it asks the Sentinels for the new master, and hears
 * `+switch-master` at once) or a Cluster failover (it reloads the slot map).
 */
export function openRedis(target: RedisTarget, options: RedisConnectionOptions): RedisClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS;
  const reconnect = (attempt: number) => Math.min(100 * attempt, 1000);
  const common: RedisOptions = {
    connectTimeout: Math.min(timeoutMs, 2000),
    // A demoted master (an old master back as a replica) answers writes with READONLY:
    // reconnecting finds the current master.
    reconnectOnError: (error) => (error.message.startsWith('READONLY') ? 2 : false),
    ...(options.purpose === 'store'
      ? {
          commandTimeout: timeoutMs,
          maxRetriesPerRequest: 2,
          // A write whose connection broke is reported failed (503) and not sent again
          // behind the caller's back once Redis is back.
          autoResendUnfulfilledCommands: false,
          // The commands a tick issues leave in one write: a message costs dozens of commands,
          // and one system call each was a sixth of the main thread.
          enableAutoPipelining: true,
          // A control request between nodes goes out at once: a pipeline waits for the end of
          // the event loop's turn.
          autoPipeliningIgnoredCommands: ['publish'],
        }
      : { maxRetriesPerRequest: null }),
  };
  switch (target.kind) {
    case 'server':
      return new Redis(target.url, { ...common, retryStrategy: reconnect });
    case 'sentinel':
      return withoutFailoverRace(
        new Redis({
          ...common,
          sentinels: target.sentinels,
          name: target.masterName,
          db: target.db,
          retryStrategy: reconnect,
          sentinelRetryStrategy: reconnect,
          failoverDetector: true,
          ...credentials(target),
          ...(target.sentinelPassword ? { sentinelPassword: target.sentinelPassword } : {}),
          ...(target.tls ? { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true } : {}),
        }),
      );
    case 'cluster':
      return new Cluster(target.nodes, {
        clusterRetryStrategy: reconnect,
        enableOfflineQueue: true,
        enableAutoPipelining: options.purpose === 'store',
        autoPipeliningIgnoredCommands: ['publish'],
        // While a replica takes over a dead master's slots (cluster-node-timeout and an
        // election), commands for those slots are tried again this often.
        retryDelayOnFailover: 200,
        retryDelayOnClusterDown: 200,
        retryDelayOnTryAgain: 200,
        slotsRefreshTimeout: Math.min(timeoutMs, 2000),
        redisOptions: {
          ...common,
          ...credentials(target),
          ...(target.tls ? { tls: {} } : {}),
        },
      });
  }
}

function credentials(target: { username?: string; password?: string }) {
  return {
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
  };
}

/**
 * ioredis listens for `+switch-master` on the Sentinels through a detector made when a
 * connection opens and dropped when the next one opens. When the master dies its connection
 * closes, the client asks the Sentinels again, and the failover's `+switch-master` can reach the
 * old detector in the middle of that attempt: it then cancels the attempt, and the client ends
 * for good ("Connection is closed.", status end; seen in one Sentinel failover in five). Here
 * the detector goes as soon as its connection closes (the client is asking the Sentinels by
 * then anyway), for this client and every duplicate made of it (the cluster's subscriber,
 * BullMQ's blocking connections).
 */
function withoutFailoverRace(client: Redis): Redis {
  client.on('close', () => {
    const connector = (client as unknown as { connector?: SentinelConnectorState }).connector;
    connector?.failoverDetector?.cleanup();
    if (connector) connector.failoverDetector = null;
  });
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (...args: Parameters<Redis['duplicate']>) =>
    withoutFailoverRace(duplicate(...args));
  return client;
}

/** What withoutFailoverRace reaches inside ioredis's Sentinel connector (ioredis 5 and 6). */
interface SentinelConnectorState {
  failoverDetector?: { cleanup(): void } | null;
}
