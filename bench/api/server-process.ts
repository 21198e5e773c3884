import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/** An HTTP server the benchmark runs in its own process, so it never shares a thread with the load. */
export interface ServerProcess {
  name: string;
  pid: number;
  baseUrl: string;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;
/** How much of the child's output to keep for the error message when it fails to start. */
const OUTPUT_TAIL = 4_000;

/**
 * Runs `node <args>` and resolves once `GET <baseUrl><readyPath>` answers 200. The child is
 * killed if it never gets there.
 */
export async function startServerProcess(options: {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  baseUrl: string;
  readyPath: string;
}): Promise<ServerProcess> {
  const child = spawn(process.execPath, options.args, {
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_TAIL);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killed = await Promise.race([exited.then(() => true), sleep(STOP_GRACE_MS, false)]);
    if (!killed) {
      child.kill('SIGKILL');
      await exited;
    }
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(
        `${options.name} exited with ${child.exitCode} before it was ready:\n${output}`,
      );
    }
    try {
      const res = await fetch(options.baseUrl + options.readyPath);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${options.name} was not ready within ${READY_TIMEOUT_MS} ms:\n${output}`);
    }
    await sleep(100);
  }
  return { name: options.name, pid: child.pid ?? 0, baseUrl: options.baseUrl, stop };
}
