import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { gatewayEnv } from '../api/gateway-process.js';
import { procUsage, type GatewayUsage } from './gateway-usage.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { newAuthId, newAuthToken } from '../../src/core/ids.js';
import { freePort } from '../../test/support/free-port.js';
import { threadScheduling } from '../../test/support/thread-scheduling.js';

const MAIN_JS = fileURLToPath(new URL('../../dist/src/main.js', import.meta.url));
const READY_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;
/** Log lines kept for the results: the first ones say most about what went wrong. */
const KEPT_LINES = 20;

/**
 * The gateway a bench drives: the built gateway it started in its own process, with what it
 * logged at warn and above, or one running elsewhere (target-gateway.ts), whose log and
 * scheduling the bench cannot see.
 */
export interface CallsGateway {
  baseUrl: string;
  /** Where callers send their INVITEs. */
  sipHost: string;
  sipPort: number;
  authId: string;
  authorization: string;
  /** Where its CPU time and memory are read. */
  usage: GatewayUsage;
  /** The SCHED_RR priority its main thread runs at; 0 for normal scheduling; null unknown. */
  realtimePriority(): number | null;
  /** What it wrote to stdout and stderr; null when the bench cannot see it. */
  log: GatewayLog | null;
  exited(): boolean;
  /** Stops a gateway the bench started; nothing for one elsewhere. */
  stop(): Promise<void>;
}

export interface GatewayLog {
  /** How many lines the gateway has written so far. */
  lineCount(): number;
  /** The first lines it wrote (at most 20), and the last few. */
  lines(): { first: string[]; last: string[] };
}

/**
 * Starts dist/src/main.js on the embedded in-memory store, with rate limiting off and logging at
 * warn, SIP over UDP on a free loopback port and RTP on `rtpPorts`. Unlike bench/api's starter it
 * keeps the gateway's output, which is how trouble under load shows.
 */
export async function startCallsGateway(options: {
  rtpPorts: string;
  mediaWorkers: number;
  /** VOXGATE_REALTIME_PRIORITY; 0 or unset leaves the gateway at normal priority. */
  realtimePriority?: number;
  /** VOXGATE_OPUS_COMPLEXITY; the gateway's default (5) when unset. */
  opusComplexity?: number;
}): Promise<CallsGateway> {
  const port = await freePort();
  const sipPort = await freePort();
  const authId = newAuthId('MA');
  const authToken = newAuthToken();
  const env = gatewayEnv({
    VOXGATE_HTTP_PORT: String(port),
    VOXGATE_AUTH_ID: authId,
    VOXGATE_AUTH_TOKEN: authToken,
    // The load's callers are on loopback and its numbers name no IncomingCarrier.
    VOXGATE_INBOUND_CARRIERS: 'open',
    VOXGATE_SIP_PORT: String(sipPort),
    VOXGATE_RTP_HOST: '127.0.0.1',
    VOXGATE_RTP_PORTS: options.rtpPorts,
    VOXGATE_MEDIA_WORKERS: String(options.mediaWorkers),
    VOXGATE_REALTIME_PRIORITY: String(options.realtimePriority ?? 0),
    ...(options.opusComplexity !== undefined && {
      VOXGATE_OPUS_COMPLEXITY: String(options.opusComplexity),
    }),
  });
  // BENCH_GATEWAY_NODE_ARGS: flags for the gateway's node, e.g. --cpu-prof to profile it.
  const nodeArgs = process.env.BENCH_GATEWAY_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, MAIN_JS], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const first: string[] = [];
  const last: string[] = [];
  let count = 0;
  let partial = '';
  const keep = (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      count++;
      if (first.length < KEPT_LINES) first.push(line);
      last.push(line);
      if (last.length > 5) last.shift();
    }
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const stop = async () => {
    if (exited()) return;
    child.kill('SIGTERM');
    if (!(await Promise.race([exit.then(() => true), sleep(STOP_GRACE_MS, false)]))) {
      child.kill('SIGKILL');
      await exit;
    }
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exited()) throw new Error(`the gateway exited before it was ready:\n${first.join('\n')}`);
    try {
      const res = await fetch(`${baseUrl}/health`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the gateway was not ready within ${READY_TIMEOUT_MS} ms`);
    }
    await sleep(100);
  }
  return {
    baseUrl,
    sipHost: '127.0.0.1',
    sipPort,
    authId,
    authorization: `Basic ${Buffer.from(`${authId}:${authToken}`).toString('base64')}`,
    usage: procUsage(child.pid ?? 0),
    realtimePriority: () => realtimePriorityOf(child.pid ?? 0),
    log: {
      lineCount: () => count,
      lines: () => ({ first: [...first], last: [...last] }),
    },
    exited,
    stop,
  };
}

/** A Linux thread's SCHED_RR or SCHED_FIFO priority; 0 otherwise. */
function realtimePriorityOf(pid: number): number {
  try {
    return threadScheduling(readFileSync(`/proc/${pid}/stat`, 'latin1')).priority || 0;
  } catch {
    return 0;
  }
}
