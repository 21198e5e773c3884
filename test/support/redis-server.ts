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
}

export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-redis-'));
  const port = await freePort();
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
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, {
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
      break;
    } catch (error) {
      if (child.exitCode !== null)
        throw new Error(`redis-server exited with ${child.exitCode}; is it installed?`);
      if (Date.now() > deadline) throw error;
      client.disconnect();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    port,
    flush: async () => {
      await client.flushall();
    },
    stop: async () => {
      client.disconnect();
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
