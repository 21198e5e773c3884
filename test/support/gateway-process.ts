import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './free-port.js';
import type { TestGateway, TestResponse } from './gateway.js';
import { TEST_SECRET_KEY } from './redis-server.js';

/** voxgate started the way `npm start` starts it, as its own process. */
export interface GatewayProcess {
  port: number;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when /health answers 200. */
  healthy(): Promise<void>;
  /** Its exit code; throws if it reported an unhandled rejection. */
  stop(): Promise<number | null>;
}

/** `prefix` runs the gateway through another command first (setpriv, prlimit). */
export async function spawnGateway(
  env: Record<string, string>,
  prefix: string[] = [],
): Promise<GatewayProcess> {
  const port = await freePort();
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VOXGATE_')),
  );
  const command = [...prefix, process.execPath, '--import', 'tsx', 'src/main.ts'];
  const child = spawn(command[0]!, command.slice(1), {
    env: {
      ...clean,
      VOXGATE_HTTP_PORT: String(port),
      VOXGATE_HTTP_HOST: '127.0.0.1',
      VOXGATE_SIP_PORT: '0',
      VOXGATE_SIP_WS_PORT: '0',
      VOXGATE_INBOUND_CARRIERS: 'open',
      ...(env.VOXGATE_REDIS_URL ? { VOXGATE_SECRET_KEY: TEST_SECRET_KEY } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => (out += String(d)));
  child.stderr?.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return {
    port,
    child,
    stdout: () => out,
    stderr: () => err,
    healthy: async () => {
      // Two seconds on a quiet machine; far more while the other core compiles a test file.
      const deadline = Date.now() + 45_000;
      let last = 'no answer';
      while (Date.now() < deadline) {
        if (child.exitCode !== null) throw new Error(`gateway exited ${child.exitCode}: ${err}`);
        try {
          const res = await fetch(`http://127.0.0.1:${port}/health`);
          if (res.status === 200) return;
          last = `${res.status} ${await res.text()}`;
        } catch (e) {
          last = String((e as Error).cause ?? e); // not listening yet
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(
        `gateway never became healthy (last /health: ${last})\nstdout: ${out.slice(-3000)}\nstderr: ${err.slice(-3000)}`,
      );
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      // Every test of a gateway process asserts this: a rejection nothing observed ends it.
      if (/unhandled rejection/i.test(err))
        throw new Error(`the gateway had an unhandled rejection: ${err}`);
      return code;
    },
  };
}

/**
 * A TestGateway whose requests go to a gateway process's REST API as `main` (enough for
 * helpers that only call `request` and read `main`).
 */
export function processApi(port: number, main: { id: string; token: string }): TestGateway {
  const request = async (
    method: string,
    path: string,
    options: { json?: unknown } = {},
  ): Promise<TestResponse> => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: {
        authorization: `Basic ${Buffer.from(`${main.id}:${main.token}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: options.json === undefined ? undefined : JSON.stringify(options.json),
    });
    const text = await res.text();
    return { status: res.status, headers: {}, body: text ? JSON.parse(text) : undefined, text };
  };
  return { main, request } as TestGateway;
}
