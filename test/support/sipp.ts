import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, freePortBlock } from './free-port.js';

/**
 * SIPp (Debian `sip-tester`, 3.6.1) as a real SIP peer: `runSipp` places calls and waits for the
 * result, `startSippUas` keeps a scenario answering in the background. Both run on 127.0.0.1 on a
 * random port, write SIPp's statistics and error traces into a temporary directory, and report
 * them parsed. Scenarios live in fixtures/sipp/ (see its README for their fields and variables).
 */

export type SipTransport = 'udp' | 'tcp';

export interface SipTarget {
  host: string;
  port: number;
}

/** An injection file (`-inf`): one row per call, fields referenced as [field0], [field1], ... */
export interface InjectionRows {
  order?: 'SEQUENTIAL' | 'RANDOM' | 'USER';
  rows: readonly (readonly string[])[];
}

interface SippCommonOptions {
  /** A file name in fixtures/sipp/, or a path. */
  scenario: string;
  transport?: SipTransport;
  /** A CSV path, or rows to write into one. */
  injectCsv?: string | InjectionRows;
  /** `-set name value`; each name must be declared by the scenario's <Global variables>. */
  variables?: Record<string, string>;
  extraArgs?: readonly string[];
  /** Keep every message sent and received (`-trace_msg`) in the result. */
  traceMessages?: boolean;
  /** The SIP port to listen on (a peer restarted at its old address); a free one otherwise. */
  port?: number;
}

/** An endpoint as the REGISTER scenarios use it. */
export interface SipEndpoint {
  username: string;
  password: string;
}

/**
 * Injection rows for the REGISTER scenarios: [field0] the username, [field1] SIPp's
 * [authentication] keyword with the password, [field2] the same with a wrong password. SIPp
 * 3.6.1 does not expand [fieldN] inside [authentication ...], but does expand a keyword that a
 * field holds whole.
 */
export function endpointRows(
  endpoints: readonly SipEndpoint[],
  order: InjectionRows['order'] = 'SEQUENTIAL',
): InjectionRows {
  const keyword = (username: string, password: string) =>
    `[authentication username=${username} password=${password}]`;
  return {
    order,
    rows: endpoints.map(({ username, password }) => {
      for (const [name, value] of Object.entries({ username, password })) {
        // SIPp splits the keyword's parameters at spaces and ends it at the first ']'
        if (!/^[^\s\];]+$/.test(value))
          throw new Error(`Expected a ${name} without spaces, ']' or ';' but received ${value}`);
      }
      return [username, keyword(username, password), keyword(username, `wrong-${password}`)];
    }),
  };
}

export interface SippRunOptions extends SippCommonOptions {
  target: SipTarget;
  /** `-m`: SIPp exits once this many calls ended. */
  calls: number;
  /** `-r`: new calls per rate period. Default 10. */
  rate?: number;
  /** `-rp` in ms. Default 1000. */
  ratePeriodMs?: number;
  /** Killed (SIGTERM, then SIGKILL) after this long. Default 60 s. */
  timeoutMs?: number;
}

export type SippUasOptions = SippCommonOptions;

/** How SIPp ended (sipp -h, "Exit codes"), or that we stopped it. */
export type SippOutcome =
  | 'all-succeeded' // 0
  | 'some-failed' // 1
  | 'internal-command' // 97
  | 'no-calls' // 99
  | 'fatal' // -1
  | 'bind-failed' // -2
  | 'stopped' // ended by stop() or by a signal
  | 'timed-out';

export interface SippResult {
  exitCode: number | null;
  outcome: SippOutcome;
  /** Cumulative counters from the last statistics row (SuccessfulCall(C), FailedCall(C)). */
  successful: number;
  failed: number;
  /** The last statistics row, by column name (`sipp -h stat`). */
  stats: Record<string, string>;
  /** Lines of SIPp's error trace: unexpected messages, failed regexps, fatal errors. */
  errors: string[];
  /** Lines written by the scenario's <log> actions. */
  logs: string[];
  /** Every message sent and received, when traceMessages was asked for. */
  messages: string;
  stderr: string;
  /** The end of SIPp's screen output (its final statistics screen). */
  screen: string;
  elapsedMs: number;
}

export interface SippUas {
  host: string;
  port: number;
  transport: SipTransport;
  /** Ends SIPp and reports what it saw. */
  stop(): Promise<SippResult>;
  /**
   * Waits until SIPp's statistics (written every second) count `calls` finished calls,
   * successful or failed: a call the gateway has let go may still be ending on SIPp's side.
   */
  settled(calls: number, timeoutMs?: number): Promise<void>;
}

export const SIPP_SCENARIO_DIR = fileURLToPath(new URL('../../fixtures/sipp/', import.meta.url));
const LOOPBACK = '127.0.0.1';
const SCREEN_TAIL = 16_384;
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export async function runSipp(options: SippRunOptions): Promise<SippResult> {
  const { target, calls, rate = 10, ratePeriodMs = 1000, timeoutMs = 60_000 } = options;
  if (!Number.isInteger(calls) || calls < 1)
    throw new Error(`Expected a positive integer for calls but received ${calls}`);
  if (!(rate > 0)) throw new Error(`Expected a positive number for rate but received ${rate}`);
  if (!Number.isInteger(target.port) || target.port < 1 || target.port > 65535)
    throw new Error(
      `Expected a port between 1 and 65535 for target.port but received ${target.port}`,
    );
  const run = await prepare(options);
  const args = [
    `${target.host}:${target.port}`,
    ...run.args,
    ...['-m', String(calls), '-r', String(rate), '-rp', `${ratePeriodMs}ms`],
    ...(options.extraArgs ?? []),
  ];
  const proc = startProcess(args, run.dir);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void proc.stop();
  }, timeoutMs);
  await proc.exited;
  clearTimeout(timer);
  const result = await run.finish(proc, timedOut);
  const failure = proc.spawnError();
  if (failure) throw failure;
  return result;
}

export async function startSippUas(options: SippUasOptions): Promise<SippUas> {
  const run = await prepare(options);
  const proc = startProcess([...run.args, ...(options.extraArgs ?? [])], run.dir);
  try {
    await listening(run.port, run.transport, proc);
  } catch (error) {
    await proc.stop();
    await run.finish(proc, false);
    throw error;
  }
  let stopped: Promise<SippResult> | undefined;
  return {
    host: LOOPBACK,
    port: run.port,
    transport: run.transport,
    stop: () => (stopped ??= proc.stop().then(() => run.finish(proc, false))),
    settled: async (calls, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = await readFile(join(run.dir, 'stats.csv'), 'utf8').catch(() => '');
        const stats = lastStatsRow(text);
        const done = Number(stats['SuccessfulCall(C)'] ?? 0) + Number(stats['FailedCall(C)'] ?? 0);
        if (done >= calls || Date.now() > deadline) return;
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

interface PreparedRun {
  /** The run's temporary directory, also SIPp's working directory for any file it writes. */
  dir: string;
  port: number;
  transport: SipTransport;
  args: string[];
  finish(proc: SippProcess, timedOut: boolean): Promise<SippResult>;
}

/** The arguments both modes share, the trace files, and the challenge echo a scenario needs. */
async function prepare(options: SippCommonOptions): Promise<PreparedRun> {
  const transport = options.transport ?? 'udp';
  if (transport !== 'udp' && transport !== 'tcp')
    throw new Error(`Expected 'udp' or 'tcp' for transport but received ${String(transport)}`);
  const scenario = scenarioPath(options.scenario);
  const globals = declaredGlobals(readFileSync(scenario, 'utf8'));
  const variables = { ...options.variables };
  for (const name of Object.keys(variables)) {
    if (!globals.includes(name))
      throw new Error(`${options.scenario} declares no <Global variables> named ${name}`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'voxgate-sipp-'));
  const file = (name: string) => join(dir, name);
  const port = options.port ?? (await freePort());
  const mediaPort = await freeMediaPorts();
  let echo: Server | undefined;
  if (globals.includes('echo_port')) {
    // A scenario that must pick one of several challenges bounces it off an echo to answer it
    // (fixtures/sipp/README.md). Over UDP SIPp's own socket echoes; TCP needs a listener.
    variables.echo_host = LOOPBACK;
    variables.echo_port = String(port);
    if (transport === 'tcp') {
      echo = await startTcpEcho();
      variables.echo_port = String((echo.address() as { port: number }).port);
    }
  }
  const args = [
    ...['-sf', scenario, '-i', LOOPBACK, '-p', String(port), '-bind_local', '-ci', LOOPBACK],
    // A media port of its own: SIPp's default (6000) is shared by every SIPp on the machine,
    // so two that play captures at once would send from the same port.
    ...['-mi', LOOPBACK, '-mp', String(mediaPort)],
    // tn: one connection per call, which SIPp needs to send a call's message elsewhere (setdest)
    ...(transport === 'udp' ? ['-t', 'u1'] : ['-t', 'tn', '-max_socket', String(maxSockets())]),
    // Socket buffers of 1 MiB (the kernel caps them at net.core.rmem_max): SIPp's 64 KiB
    // default drops datagrams in the bursts of a load test.
    ...['-buff_size', '1048576'],
    ...['-nostdin', '-trace_stat', '-stf', file('stats.csv'), '-fd', '1'],
    ...['-trace_err', '-error_file', file('errors.log')],
    ...['-trace_logs', '-log_file', file('logs.log')],
    ...(options.traceMessages ? ['-trace_msg', '-message_file', file('messages.log')] : []),
    ...Object.entries(variables).flatMap(([name, value]) => ['-set', name, value]),
  ];
  if (options.injectCsv !== undefined) {
    let csv = options.injectCsv;
    if (typeof csv !== 'string') {
      await writeFile(file('inject.csv'), injectionText(csv));
      csv = file('inject.csv');
    }
    args.push('-inf', resolve(csv));
  }
  return {
    dir,
    port,
    transport,
    args,
    finish: async (proc, timedOut) => {
      echo?.close();
      const read = (name: string) => readFile(file(name), 'utf8').catch(() => '');
      const stats = lastStatsRow(await read('stats.csv'));
      const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');
      const result: SippResult = {
        exitCode: proc.child.exitCode,
        outcome: timedOut ? 'timed-out' : outcomeOf(proc.child.exitCode),
        successful: Number(stats['SuccessfulCall(C)'] ?? 0),
        failed: Number(stats['FailedCall(C)'] ?? 0),
        stats,
        errors: lines(await read('errors.log')),
        logs: lines(await read('logs.log')),
        messages: await read('messages.log'),
        stderr: proc.stderr(),
        screen: proc.screen(),
        elapsedMs: proc.elapsedMs(),
      };
      await rm(dir, { recursive: true, force: true });
      return result;
    },
  };
}

interface SippProcess {
  child: ChildProcess;
  /** Resolves when SIPp has ended, or could not start (see spawnError). */
  exited: Promise<void>;
  spawnError(): Error | undefined;
  stop(): Promise<void>;
  stderr(): string;
  screen(): string;
  elapsedMs(): number;
}

function startProcess(args: string[], cwd: string): SippProcess {
  const started = Date.now();
  let ended = 0;
  let spawnError: Error | undefined;
  const child = spawn('sipp', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let screen = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (screen = (screen + String(d)).slice(-SCREEN_TAIL)));
  child.stderr?.on('data', (d) => (stderr += String(d)));
  const exited = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      spawnError = new Error(`sipp did not start (is sip-tester installed?): ${error.message}`);
      resolve();
    });
    child.once('close', () => resolve());
  }).then(() => {
    live.delete(child);
    ended = Date.now();
  });
  return {
    child,
    exited,
    spawnError: () => spawnError,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null && !spawnError) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(killer);
      }
      await exited;
    },
    stderr: () => stderr,
    screen: () => screen,
    elapsedMs: () => (ended || Date.now()) - started,
  };
}

const OUTCOMES: Record<number, SippOutcome> = {
  0: 'all-succeeded',
  1: 'some-failed',
  97: 'internal-command',
  99: 'no-calls',
  254: 'bind-failed', // -2
  255: 'fatal', // -1
};
const outcomeOf = (code: number | null): SippOutcome =>
  (code === null ? undefined : OUTCOMES[code]) ?? 'stopped';

function scenarioPath(scenario: string): string {
  const path = scenario.includes('/') ? resolve(scenario) : join(SIPP_SCENARIO_DIR, scenario);
  if (!existsSync(path)) throw new Error(`No SIPp scenario at ${path}`);
  return path;
}

/** Names in <Global variables="a,b"/>: SIPp refuses `-set` for any other name. */
function declaredGlobals(xml: string): string[] {
  return [...xml.matchAll(/<Global\s+variables="([^"]*)"/g)].flatMap((m) =>
    (m[1] ?? '').split(',').map((name) => name.trim()),
  );
}

function injectionText({ order = 'SEQUENTIAL', rows }: InjectionRows): string {
  for (const row of rows) {
    for (const field of row) {
      if (/[;\r\n]/.test(field))
        throw new Error(
          `Expected injection fields without ';' or line breaks but received ${field}`,
        );
    }
  }
  return `${order}\n${rows.map((row) => row.join(';')).join('\n')}\n`;
}

function lastStatsRow(csv: string): Record<string, string> {
  const rows = csv.split('\n').filter((line) => line.trim() !== '');
  const header = rows[0]?.split(';') ?? [];
  const last = rows.length > 1 ? (rows[rows.length - 1]?.split(';') ?? []) : [];
  return Object.fromEntries(header.map((name, i) => [name, last[i] ?? '']).filter(([n]) => n));
}

let socketLimit: number | undefined;
/** -max_socket under the open-file limit: SIPp refuses tn otherwise (its default is 50000). */
function maxSockets(): number {
  if (socketLimit === undefined) {
    const out = spawnSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim();
    const hard = out === 'unlimited' ? 65536 : Number(out) || 1024;
    socketLimit = Math.max(16, Math.min(50_000, hard - 100));
  }
  return socketLimit;
}

/** An even UDP port with the three above it free on loopback, for SIPp's media (RTP, RTCP, video). */
function freeMediaPorts(): Promise<number> {
  return freePortBlock(4, ['udp']);
}

/**
 * Resolves once SIPp holds its port, read from /proc/net rather than by binding the port
 * ourselves, which could take it from SIPp at the moment it starts.
 */
async function listening(port: number, transport: SipTransport, proc: SippProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const failure = proc.spawnError();
    if (failure) throw failure;
    if (proc.child.exitCode !== null || proc.child.signalCode !== null)
      throw new Error(`sipp exited with ${proc.child.exitCode} before listening: ${proc.stderr()}`);
    if (await portBound(port, transport)) return;
    if (Date.now() > deadline) throw new Error(`sipp never listened on ${transport} ${port}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function portBound(port: number, transport: SipTransport): Promise<boolean> {
  const table = await readFile(`/proc/net/${transport}`, 'utf8');
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  // columns: sl local_address rem_address st ...; TCP state 0A is LISTEN
  return table
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .some((cols) => cols[1] === local && (transport === 'udp' || cols[3] === '0A'));
}

function startTcpEcho(): Promise<Server> {
  const server = createServer((socket) => {
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(0, LOOPBACK, () => ok(server));
  });
}
