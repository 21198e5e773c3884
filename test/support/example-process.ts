import { spawn, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import type { TestGateway } from './gateway.js';
import { freePort } from './free-port.js';
import { until } from './wait.js';

/** A program of examples/ running as its own process, as `npm run example:...` runs it. */
export interface ExampleProcess {
  child: ChildProcess;
  /** Everything it printed on stdout and stderr so far. */
  output(): string;
  /** The lines of its output that match `pattern`. */
  lines(pattern: RegExp): string[];
  /** Waits until a line matches `pattern` and returns it. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Types `line` and Enter on its input (started with `input: true`). */
  type(line: string): void;
  /** Resolves with the exit code once it ends by itself. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * Starts `examples/<name>.ts` with `args`, and with `env` over a copy of this process's; with
 * `input`, its stdin is a pipe that `type()` writes to.
 */
export function startExample(
  name: string,
  args: string[] = [],
  env: Record<string, string> = {},
  options: { input?: boolean } = {},
): ExampleProcess {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VOXGATE_')),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', `examples/${name}.ts`, ...args], {
    env: { ...clean, ...env },
    stdio: [options.input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (d) => (text += String(d)));
  child.stderr?.on('data', (d) => (text += String(d)));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const lines = (pattern: RegExp) => text.split('\n').filter((line) => pattern.test(line));
  return {
    child,
    output: () => text,
    type: (line) => {
      if (!child.stdin) throw new Error(`examples/${name}.ts was started without input`);
      child.stdin.write(`${line}\n`);
    },
    lines,
    exited,
    waitFor: async (pattern, timeoutMs = 15_000) => {
      try {
        await until(() => lines(pattern).length > 0, timeoutMs, 20);
      } catch {
        throw new Error(`examples/${name}.ts never printed ${pattern}; it printed:\n${text}`);
      }
      return lines(pattern)[0]!;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** An example application serving HTTP on a port of its own, started and listening. */
export interface ServingExample extends ExampleProcess {
  /** The URL of `path` on it, as an application's answer or message URL names it. */
  url(path: string): string;
}

/**
 * Starts an example application on a free port (`--port`, before `args`) and waits for the
 * line that says it listens.
 */
export async function startServingExample(
  name: string,
  listening: RegExp,
  args: string[] = [],
): Promise<ServingExample> {
  const port = await freePort();
  const example = startExample(name, ['--port', String(port), ...args]);
  await example.waitFor(listening);
  return { ...example, url: (path) => `http://127.0.0.1:${port}${path}` };
}

/** What an example needs to reach a listening test gateway: its URL and the main account. */
export function exampleEnv(gw: TestGateway): Record<string, string> {
  const { port } = gw.gateway.app.server.address() as AddressInfo;
  return {
    VOXGATE_URL: `http://127.0.0.1:${port}`,
    VOXGATE_AUTH_ID: gw.main.id,
    VOXGATE_AUTH_TOKEN: gw.main.token,
  };
}

/** The gateway's SIP address over UDP, as call-in's --gateway-sip takes it. */
export function gatewaySip(gw: TestGateway): string {
  return `127.0.0.1:${gw.gateway.sip.addresses.udp.port}`;
}

/** Creates an application with `urls` and puts `number` on it. */
export async function numberWithApplication(
  gw: TestGateway,
  number: string,
  urls: Record<string, string>,
): Promise<string> {
  const base = `/v1/Account/${gw.main.id}`;
  const app = await gw.request('POST', `${base}/Application/`, {
    json: { app_name: `example ${number}`, ...urls },
  });
  if (app.status !== 201) throw new Error(`application create failed: ${app.text}`);
  const added = await gw.request('POST', `${base}/Number/`, {
    json: { numbers: number, carrier: 'local', region: 'local', app_id: app.body.app_id },
  });
  if (added.status >= 300) throw new Error(`number add failed: ${added.text}`);
  return app.body.app_id as string;
}
