import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { exampleEnv, startExample, type ExampleProcess } from './example-process.js';
import { freePort } from './free-port.js';
import type { Credentials, TestGateway } from './gateway.js';

const CHILD = fileURLToPath(new URL('./legacy-sdk-child.mjs', import.meta.url));
const GUARD = fileURLToPath(new URL('./loopback-only.mjs', import.meta.url));

/** What one call of the SDK called back with: `(status, body)`, or why it never did. */
export interface LegacyAnswer {
  status?: number;
  // The SDK hands back parsed JSON as it came.
  body?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  error?: string;
}

/**
 * The official Node SDK 0.4.2 (`plivo-legacy`) in a process of its own, left on its default
 * host, https://api.plivo.com, and reaching a test gateway over HTTPS the documented way:
 * through examples/sdk-bridge.ts as its HTTPS proxy, trusting the bridge's authority with
 * NODE_EXTRA_CA_CERTS (only in that process), and with the loopback-only guard loaded, so a
 * request that would have left the machine fails and says so on stderr.
 */
export class LegacySdk {
  private readonly waiting: ((answer: LegacyAnswer) => void)[] = [];
  private errors = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly bridge: ExampleProcess,
    private readonly dir: string,
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      this.waiting.shift()?.(JSON.parse(line) as LegacyAnswer);
    });
    child.stderr!.on('data', (d) => (this.errors += String(d)));
    child.once('exit', (code) => {
      for (const resolve of this.waiting.splice(0))
        resolve({ error: `the SDK's process ended (${code}): ${this.errors}` });
    });
  }

  /** With `trust: false` the SDK's process is not told of the bridge's authority. */
  static async start(gw: TestGateway, options: { trust?: boolean } = {}): Promise<LegacySdk> {
    const dir = await mkdtemp(join(tmpdir(), 'voxgate-legacy-sdk-'));
    const port = await freePort();
    const bridge = startExample(
      'sdk-bridge',
      ['--port', String(port), '--dir', dir],
      exampleEnv(gw),
    );
    await bridge.waitFor(/sdk-bridge on http/);
    const proxy = `http://127.0.0.1:${port}`;
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !/^(voxgate_|https?_proxy$|no_proxy$)/i.test(k)),
    );
    const child = spawn(process.execPath, [CHILD], {
      env: {
        ...clean,
        HTTPS_PROXY: proxy,
        ...(options.trust === false ? {} : { NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') }),
        NODE_OPTIONS: `--import=${GUARD}`,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new LegacySdk(child, bridge, dir);
  }

  /** Calls `call` (`create_incoming_carrier`...) with `params` as the account `as`. */
  call(call: string, params: Record<string, unknown>, as: Credentials): Promise<LegacyAnswer> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.stdin!.write(`${JSON.stringify({ call, params, as })}\n`);
    });
  }

  /** What the SDK's process wrote on stderr (the guard's refusals among it). */
  stderr(): string {
    return this.errors;
  }

  /** The bridge's lines for the requests it passed on: `POST /v1/... -> 201`. */
  bridged(): string[] {
    return this.bridge.lines(/ -> \d{3}$/).map((line) => line.replace(/^\S+ /, ''));
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.stdin!.end();
      await exited;
    }
    await this.bridge.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}
