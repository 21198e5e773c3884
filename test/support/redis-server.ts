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
  /** Hangs the server (SIGSTOP): connections stay open and nothing is answered. */
  pause(): void;
  /** Wakes a paused server (SIGCONT): it answers what it was sent meanwhile. */
  resume(): void;
  /** Kills the server (SIGKILL), as a crash: its connections are refused until restart(). */
  kill(): Promise<void>;
  /**
   * Starts it again on the same port: with `persistent` it comes back with every write it
   * acknowledged (append-only file, fsync always), without, it comes back empty.
   */
  restart(): Promise<void>;
}

export async function startRedis(options: { persistent?: boolean } = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-redis-'));
  const port = await freePort();
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--dir',
    dir,
    ...(options.persistent
      ? ['--appendonly', 'yes', '--appendfsync', 'always']
      : ['--appendonly', 'no']),
  ];
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {}); // refused connections while the server starts are expected

  let child: ChildProcess;
  const launch = async () => {
    child = spawn('redis-server', args, { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        if (client.status !== 'ready') await client.connect();
        await client.ping();
        return;
      } catch (error) {
        if (child.exitCode !== null)
          throw new Error(`redis-server exited with ${child.exitCode}; is it installed?`);
        if (Date.now() > deadline) throw error;
        client.disconnect();
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const exit = (signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  await launch();
  return {
    url,
    port,
    flush: async () => {
      await client.flushall();
    },
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    kill: async () => {
      client.disconnect();
      await exit('SIGKILL');
    },
    restart: async () => {
      client.disconnect();
      await exit('SIGKILL');
      await launch();
    },
    stop: async () => {
      client.disconnect();
      child.kill('SIGCONT');
      await exit('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
