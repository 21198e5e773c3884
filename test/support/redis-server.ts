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
  /**
   * Stops the server and starts it again on the same port, empty (it keeps nothing on disk),
   * as a Redis without persistence comes back from a crash.
   */
  restart(): Promise<void>;
}

export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let server = await spawnRedis(port, dir);
  const stopServer = () => {
    server.client.disconnect();
    const { child } = server;
    return new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  };
  return {
    url,
    port,
    flush: async () => {
      await server.client.flushall();
    },
    restart: async () => {
      await stopServer();
      server = await spawnRedis(port, dir);
    },
    stop: async () => {
      await stopServer();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts redis-server on `port` and resolves once it answers PING. */
async function spawnRedis(
  port: number,
  dir: string,
): Promise<{ child: ChildProcess; client: Redis }> {
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  );
  const client = new Redis(`redis://127.0.0.1:${port}`, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {}); // refused connections while the server starts are expected
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await client.connect();
      await client.ping();
      return { child, client };
    } catch (error) {
      if (child.exitCode !== null)
        throw new Error(`redis-server exited with ${child.exitCode}; is it installed?`);
      if (Date.now() > deadline) throw error;
      client.disconnect();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
