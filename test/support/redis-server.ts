import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';

/**
 * The VOXGATE_SECRET_KEY of test gateways on Redis (the gateway refuses Redis without one):
 * fixed, so every node of a test shares it, as a cluster's nodes must.
 */
export const TEST_SECRET_KEY = '5ec7e7'.repeat(10) + '0123';

/** A real redis-server on a random loopback port, started for a test file and stopped after. */
export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Empties every key (between tests). */
  flush(): Promise<void>;
  /** SIGKILL, as a crash: connections drop, new ones are refused. */
  kill(): Promise<void>;
  /** SIGSTOP: connections stay open and new ones are accepted, but nothing is answered. */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  /**
   * Starts it again after kill(), on the same port: with what it held when started `durable`,
   * else empty.
   */
  restart(): Promise<void>;
}

export async function startRedis(
  options: {
    /** Every write reaches an append-only file before it is answered, so restart() keeps it. */
    durable?: boolean;
  } = {},
): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {}); // refused connections while the server starts are expected
  const persistence = options.durable
    ? ['--appendonly', 'yes', '--appendfsync', 'always']
    : ['--appendonly', 'no'];
  let child = await spawnRedis(dir, port, persistence, client);
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const kill = async (signal: NodeJS.Signals) => {
    client.disconnect();
    if (exited()) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // A stopped process takes SIGTERM only once it runs again.
    child.kill('SIGCONT');
    child.kill(signal);
    await gone;
  };
  return {
    url,
    port,
    flush: async () => {
      await client.flushall();
    },
    kill: () => kill('SIGKILL'),
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    restart: async () => {
      if (!exited()) throw new Error('restart() is for a killed redis-server');
      child = await spawnRedis(dir, port, persistence, client);
    },
    stop: async () => {
      await kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Spawns redis-server on `port` and waits until `client` gets an answer to PING. */
async function spawnRedis(
  dir: string,
  port: number,
  persistence: string[],
  client: Redis,
): Promise<ChildProcess> {
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--dir', dir],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await client.connect();
      await client.ping();
      return child;
    } catch (error) {
      if (child.exitCode !== null)
        throw new Error(`redis-server exited with ${child.exitCode}; is it installed?`);
      if (Date.now() > deadline) throw error;
      client.disconnect();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
