import { Queue, Worker } from 'bullmq';
import { openRedis, type RedisClient } from '../state/redis-connection.js';
import { parseRedisTarget } from '../state/redis-target.js';
import { ReplicaWait } from '../state/replica-wait.js';
import { STORE_CALL_MS, withinStoreDeadline } from '../state/store-deadline.js';
import type { RetryHandler, RetryQueue } from './retry-queue.js';

export interface BullMqRetryQueueOptions {
  /** A VOXGATE_REDIS_URL: one server, `redis+cluster://` or `redis+sentinel://`. */
  redisUrl: string;
  /**
   * BullMQ queue name; keys live under `bull:<queueName>:` (on a Redis Cluster under
   * `bull:{<queueName>}:`, see queueKeyName).
   */
  queueName?: string;
  /** schedule() resolves only once the replicas of the queue's master have the job. */
  waitForReplicas?: boolean;
  /** How many due jobs one process handles at once. */
  concurrency?: number;
  /**
   * How long schedule() waits for Redis to take a job before it fails: the store's bound on one
   * operation by default, since a client's request (a message send) may wait on it after its
   * store writes went through, and is promised an answer within the store's deadline.
   */
  scheduleTimeoutMs?: number;
  /** Connection and worker errors; a repeated error is reported once until Redis is back. */
  onError?: (error: Error) => void;
  /**
   * For handlers that are safe to run again (they find what an earlier run did): a job whose
   * handler throws runs again this many times in all, `retryDelayMs` apart, and a job whose
   * process lost hold of it (Redis away, the process gone) is handed out again as often.
   */
  rerun?: { attempts: number; retryDelayMs: number };
}

export const DEFAULT_CALLBACK_QUEUE_NAME = 'voxgate-callbacks';

/**
 * A worker's hold on a running job lasts JOB_LOCK_MS unless renewed (every half of it), and
 * workers look for jobs whose hold lapsed every STALLED_CHECK_MS: the job of a process that
 * died during it (a callback attempt, an SMS being submitted) goes to a live worker within
 * their sum, not BullMQ's 30 s and 30 s. A process that cannot renew for 6 s has missed its
 * cluster heartbeats for twice their default expiry (VOXGATE_NODE_TTL_MS) and is taken for
 * dead anyway.
 */
const JOB_LOCK_MS = 6000;
const STALLED_CHECK_MS = 3000;

/**
 * How long close() lets running jobs finish and BullMQ's connections quit. After a failover
 * a connection may still wait on a server that is gone (a queue connection waits for Redis
 * forever, by design): past this, the connections are dropped instead.
 */
const GRACEFUL_CLOSE_MS = 5000;

/**
 * Durable retries on BullMQ delayed jobs: a retry scheduled before the gateway stops is
 * delivered by whichever gateway process runs a worker on the same Redis after it. A process
 * that dies during an attempt leaves a stalled job that BullMQ hands out again (within
 * JOB_LOCK_MS + STALLED_CHECK_MS), so a callback may arrive twice but is not lost.
 */
export class BullMqRetryQueue<T> implements RetryQueue<T> {
  private readonly connection: RedisClient;
  private readonly queue: Queue;
  private readonly queueName: string;
  private readonly replicas: ReplicaWait | null;
  private readonly concurrency: number;
  private readonly scheduleTimeoutMs: number;
  private readonly onError: (error: Error) => void;
  private lastError: string | undefined;
  private worker: Worker | undefined;
  private readonly rerun: { attempts: number; retryDelayMs: number } | undefined;

  constructor(options: BullMqRetryQueueOptions) {
    const target = parseRedisTarget(options.redisUrl);
    this.queueName = queueKeyName(
      options.queueName ?? DEFAULT_CALLBACK_QUEUE_NAME,
      target.kind === 'cluster',
    );
    this.concurrency = options.concurrency ?? 20;
    this.scheduleTimeoutMs = options.scheduleTimeoutMs ?? STORE_CALL_MS;
    this.onError = options.onError ?? (() => undefined);
    this.rerun = options.rerun;
    // BullMQ's ESM build cannot load ioredis by itself (it needs `require`), so it is handed a
    // client, and its worker refuses one without `maxRetriesPerRequest: null`. A client passed
    // in is shared: BullMQ duplicates it for the blocking connection but never quits it, so
    // close() does.
    this.connection = openRedis(target, { purpose: 'queue' });
    this.replicas = options.waitForReplicas ? new ReplicaWait(this.connection) : null;
    this.connection.on('error', this.reportError);
    this.connection.on('ready', () => (this.lastError = undefined));
    this.queue = new Queue(this.queueName, {
      connection: this.connection,
      // Delivered jobs leave nothing behind; a few failed ones (a handler bug) stay for a look.
      defaultJobOptions: {
        removeOnComplete: true,
        removeOnFail: 100,
        ...(options.rerun
          ? {
              attempts: options.rerun.attempts,
              backoff: { type: 'fixed', delay: options.rerun.retryDelayMs },
            }
          : {}),
      },
    });
    this.queue.on('error', this.reportError);
  }

  async schedule(job: T, delayMs: number, id?: string): Promise<void> {
    // With `maxRetriesPerRequest: null` a command waits for Redis forever; a caller must learn
    // that its retry was not stored instead of hanging (and a client waiting on it, within the
    // store's deadline).
    const options = id === undefined ? { delay: delayMs } : { delay: delayMs, jobId: id };
    await withinStoreDeadline(
      async () => {
        await this.queue.add('retry', job, options);
        await this.replicas?.after([`bull:${this.queueName}:id`]);
      },
      this.scheduleTimeoutMs,
      this.connection,
    );
  }

  start(handler: RetryHandler<T>): void {
    if (this.worker) throw new Error('The retry queue is already started');
    this.worker = new Worker(this.queueName, async (job) => handler(job.data as T), {
      connection: this.connection,
      concurrency: this.concurrency,
      lockDuration: JOB_LOCK_MS,
      stalledInterval: STALLED_CHECK_MS,
      ...(this.rerun ? { maxStalledCount: this.rerun.attempts } : {}),
    });
    this.worker.on('error', this.reportError);
  }

  async close(): Promise<void> {
    if (this.connection.status === 'ready') {
      // The worker first: its running handlers may still schedule a retry on the queue.
      const graceful = (async () => {
        await this.worker?.close();
        await this.queue.close();
        await this.connection.quit().catch(() => undefined);
      })();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), GRACEFUL_CLOSE_MS);
      });
      const outcome = await Promise.race([graceful.then(() => 'closed' as const), late]);
      clearTimeout(timer);
      if (outcome === 'closed') return;
      this.onError(
        new Error(
          `the queue did not close within ${GRACEFUL_CLOSE_MS} ms: its connections are dropped`,
        ),
      );
      graceful.catch(() => undefined);
      this.connection.disconnect();
      void this.worker?.disconnect().catch(() => undefined);
      void this.queue.disconnect().catch(() => undefined);
      return;
    }
    // Redis is unreachable: a graceful close would wait for it forever, and no running job
    // can finish without it anyway.
    this.connection.disconnect();
    await this.worker?.close(true);
    await this.queue.close();
  }

  private readonly reportError = (error: Error): void => {
    if (error.message === this.lastError) return;
    this.lastError = error.message;
    this.onError(error);
  };
}

/**
 * BullMQ runs Lua scripts over many keys of one queue, which a Redis Cluster allows only within
 * one hash slot: there the queue's name is a hash tag, `{name}`, which also spreads the queues
 * over the masters. One server and Sentinel keep the plain name, so the jobs a single-server
 * deployment already holds stay where its workers look for them.
 */
export function queueKeyName(name: string, cluster: boolean): string {
  return cluster ? `{${name}}` : name;
}
