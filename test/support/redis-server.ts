import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

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

/**
 * Ports a test hands to a server it starts (in another process, or later): drawn at random below
 * the kernel's ephemeral range. A port that listen(0) found free is one of that range, where any
 * other test's listen(0) or outgoing connection may take it before the server binds it (seen as
 * EADDRINUSE at a gateway's start). Below 20000, where the tests' RTP ranges start.
 */
const TEST_PORTS = { min: 10000, max: Math.min(19999, ephemeralRangeStart() - 1) };

function ephemeralRangeStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
  } catch {
    return 32768; // Linux's default
  }
}

/**
 * Ports freePort has handed out in this process: each goes once (two asked for in a row, before
 * either is bound, would otherwise both be found free).
 */
const handedOut = new Set<number>();

/** A port free for TCP and UDP on loopback now, from TEST_PORTS, never one it gave before. */
export async function freePort(): Promise<number> {
  const span = TEST_PORTS.max - TEST_PORTS.min + 1;
  for (let tried = 0; tried < 100; tried++) {
    const port = TEST_PORTS.min + Math.floor(Math.random() * span);
    if (handedOut.has(port)) continue;
    if ((await canBind(port, 'tcp')) && (await canBind(port, 'udp'))) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port in ${TEST_PORTS.min}-${TEST_PORTS.max} after 100 tries`);
}

function canBind(port: number, kind: 'tcp' | 'udp'): Promise<boolean> {
  return new Promise((resolve) => {
    if (kind === 'udp') {
      const socket = createSocket('udp4');
      socket.once('error', () => {
        socket.close();
        resolve(false);
      });
      socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
      return;
    }
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
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
