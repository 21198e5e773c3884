import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { type SipTarget } from './sipp.js';

/**
 * Kamailio (Debian `kamailio`, 5.6) in front of gateway nodes, started in the foreground with
 * the configuration we ship (docker/kamailio/kamailio.cfg). Its dispatcher list, control
 * socket, runtime directory and pid file live in a temporary directory; it listens on UDP and
 * TCP on 127.0.0.1 and a free port, and for WebSocket (Debian `kamailio-websocket-modules`)
 * on another when asked.
 */
export interface KamailioOptions {
  /** The gateway nodes of dispatcher set 1, as host:port (UDP). */
  nodes: readonly SipTarget[];
  /** OPTIONS probe interval in seconds. Default 1. */
  pingIntervalS?: number;
  /** How long a node has to respond before the next is tried. Default 1500 ms. */
  failoverTimeoutMs?: number;
  /** Also take SIP over WebSocket (WITH_WEBSOCKET), on a TCP port of its own: `wsPort`. */
  websocket?: boolean;
  /** Shared memory in MB (-m): every transaction lives there. Default 32, enough for tests. */
  sharedMemoryMb?: number;
}

/** One destination as `kamcmd dispatcher.list` shows it. */
export interface DispatcherEntry {
  uri: string;
  /** The state letter: A active, I inactive, T trying, D disabled; P when probed. */
  flags: string;
}

export interface Kamailio extends SipTarget {
  /** The WebSocket listener's port (ws://127.0.0.1:wsPort), when asked for. */
  wsPort: number | null;
  /** Everything Kamailio logged (stderr). */
  output(): string;
  /** Runs `kamcmd` against this instance's control socket; resolves with its output. */
  kamcmd(...args: string[]): Promise<string>;
  /** The destinations of set 1 and their states. */
  dispatcherList(): Promise<DispatcherEntry[]>;
  /** Rewrites the dispatcher list with these nodes and reloads it, as an operator does. */
  setNodes(nodes: readonly SipTarget[]): Promise<void>;
  /** Resolves once each node (by URI) is in its state: AP probed up, IP probed out. */
  waitForStates(states: Record<string, 'AP' | 'IP'>, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export const KAMAILIO_CONFIG = fileURLToPath(
  new URL('../../docker/kamailio/kamailio.cfg', import.meta.url),
);
const run = promisify(execFile);
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export const nodeUri = (node: SipTarget): string => `sip:${node.host}:${node.port}`;

function listText(nodes: readonly SipTarget[]): string {
  return `${nodes.map((node) => `1 ${nodeUri(node)}`).join('\n')}\n`;
}

export async function startKamailio(options: KamailioOptions): Promise<Kamailio> {
  const dir = await mkdtemp(join(tmpdir(), 'voxgate-kamailio-'));
  const list = join(dir, 'dispatcher.list');
  const ctl = `unix:${join(dir, 'kamailio_ctl')}`;
  await writeFile(list, listText(options.nodes));
  const port = await freePort();
  const wsPort = options.websocket ? await freePort() : null;
  const args = [
    ...['-DD', '-E', '-f', KAMAILIO_CONFIG],
    ...['-l', `udp:127.0.0.1:${port}`, '-l', `tcp:127.0.0.1:${port}`],
    ...['-Y', dir, '-P', join(dir, 'kamailio.pid'), '-w', dir],
    // small: two workers per listener, 32 MB shared and 8 MB private memory
    ...['-n', '2', '-N', '2', '-m', String(options.sharedMemoryMb ?? 32), '-M', '8'],
    ...['-A', `DISPATCHER_LIST="${list}"`, '-A', `CTL_SOCKET="${ctl}"`],
    ...['-A', `PING_INTERVAL_S=${options.pingIntervalS ?? 1}`],
    ...['-A', `FAILOVER_TIMEOUT_MS=${options.failoverTimeoutMs ?? 1500}`],
    ...(wsPort === null ? [] : ['-A', 'WITH_WEBSOCKET', '-l', `tcp:127.0.0.1:${wsPort}`]),
  ];
  const child = spawn('kamailio', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(child);
  let output = '';
  let spawnError: Error | undefined;
  child.stderr.on('data', (chunk: Buffer) => (output += String(chunk)));
  const exited = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      spawnError = new Error(`kamailio did not start (is kamailio installed?): ${error.message}`);
      resolve();
    });
    child.once('close', () => resolve());
  }).finally(() => live.delete(child));
  const running = () => child.exitCode === null && child.signalCode === null && !spawnError;

  const kamcmd = async (...command: string[]) =>
    (await run('kamcmd', ['-s', ctl, ...command], { timeout: 5000 })).stdout;

  const dispatcherList = async (): Promise<DispatcherEntry[]> => {
    const text = await kamcmd('dispatcher.list');
    const entries: DispatcherEntry[] = [];
    for (const match of text.matchAll(/URI:\s*(\S+)\s+FLAGS:\s*(\S+)/g)) {
      entries.push({ uri: match[1]!, flags: match[2]! });
    }
    return entries;
  };

  const stop = async () => {
    if (running()) {
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(kill);
    }
    await exited;
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (spawnError) throw spawnError;
      if (!running()) throw new Error(`kamailio exited with ${child.exitCode}:\n${output}`);
      const ready = await kamcmd('core.version').then(
        () => true,
        () => false,
      );
      if (ready && (await udpBound(port))) break;
      if (Date.now() > deadline) throw new Error(`kamailio did not start listening:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    host: '127.0.0.1',
    port,
    wsPort,
    output: () => output,
    kamcmd,
    dispatcherList,
    setNodes: async (nodes) => {
      await writeFile(list, listText(nodes));
      await kamcmd('dispatcher.reload');
    },
    waitForStates: async (states, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      let seen: DispatcherEntry[] = [];
      for (;;) {
        seen = await dispatcherList();
        const done = Object.entries(states).every(([uri, state]) =>
          seen.some((entry) => entry.uri === uri && entry.flags === state),
        );
        if (done) return;
        if (Date.now() > deadline) {
          throw new Error(
            `dispatcher states never became ${JSON.stringify(states)}: ${JSON.stringify(seen)}`,
          );
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop,
  };
}

async function udpBound(port: number): Promise<boolean> {
  const table = await readFile('/proc/net/udp', 'utf8');
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return table.split('\n').some((line) => line.trim().split(/\s+/)[1] === local);
}
