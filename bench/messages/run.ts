/**
 * bench:messages — SMS end to end: REST sends (one destination per request unless told otherwise, many in flight) →
 * the gateway → an SMSC simulator in another process (answers at once, DELIVRD receipt per
 * part) → receipts → delivered status callbacks to a receiver here. Once on the embedded store
 * and once on Redis. Reports messages/s with none lost, the REST request to submit_sm and the
 * submit_sm to delivered callback (receipt sent right after the answer) at p50/p99, and CPU per
 * message (the gateway's, the SMSC's and this process's, which share the machine), then
 * the same at a paced rate well below saturation for latencies without queueing.
 *
 * `--per-request N` sends N destinations per request in the saturated part (`dst` joined by `<`,
 * one message each, as bulk senders do); the default, 1, is one message per request. Before it,
 * `--warm-up` messages go the same way and are not counted, so that what is measured is a
 * gateway in service (compiled hot paths, a grown heap).
 *
 * Usage: npm run build && npm run bench:messages [-- --messages 10000 --concurrency 64 --rate 200
 *     --per-request 1 --warm-up 5000]
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { startRedis } from '../../test/support/redis-server.js';
import { startGatewayProcess } from '../api/gateway-process.js';
import { describeMachine } from '../api/machine.js';
import { probeMachineSpeed } from '../api/machine-speed.js';
import { processCpuSeconds } from '../api/process-cpu.js';
import { percentiles } from '../calls/stats.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '64' },
    store: { type: 'string', default: 'both' },
    /** The paced step: messages/s well below saturation, where latencies are not queueing. */
    rate: { type: 'string', default: '200' },
    'per-request': { type: 'string', default: '1' },
    /** Messages sent the same way first, not counted. */
    'warm-up': { type: 'string', default: '5000' },
  },
});
const MESSAGES = Number(values.messages);
const CONCURRENCY = Number(values.concurrency);
const PACED_RATE = Number(values.rate);
const PACED_MESSAGES = PACED_RATE * 10;
const PER_REQUEST = Number(values['per-request']);
const WARM_UP = Number(values['warm-up']);
if (!Number.isInteger(WARM_UP) || WARM_UP < 0)
  throw new Error(`Expected --warm-up of 0 or more but received ${values['warm-up']}`);
if (!Number.isInteger(PER_REQUEST) || PER_REQUEST < 1 || PER_REQUEST > 1000)
  throw new Error(`Expected --per-request from 1 to 1000 but received ${values['per-request']}`);
const SRC = '14155550100';
const now = () => performance.timeOrigin + performance.now();

interface Result {
  store: string;
  messages: number;
  seconds: number;
  perSecond: number;
  lost: number;
  restToSubmitMs: ReturnType<typeof percentiles>;
  submitToCallbackMs: ReturnType<typeof percentiles>;
  gatewayCpuMsPerMessage: number;
  /** The SMSC simulator's process and this one (REST client and callback receiver). */
  smscCpuMsPerMessage: number;
  harnessCpuMsPerMessage: number;
  /** redis-server's CPU and commands per message (Redis store only). */
  redisCpuMsPerMessage: number | null;
  redisCommandsPerMessage: number | null;
  /** The commands behind that figure, the most frequent first. */
  redisCommandMix: Record<string, number> | null;
  /** The same messages sent at PACED_RATE: latencies without queueing. */
  paced: {
    perSecond: number;
    lost: number;
    restToSubmitMs: ReturnType<typeof percentiles>;
    submitToCallbackMs: ReturnType<typeof percentiles>;
  };
}

async function startSmsc(file: string) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/messages/smsc-process.ts', file],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  while (!/port (\d+)/.test(out)) await new Promise((r) => setTimeout(r, 20));
  const port = Number(/port (\d+)/.exec(out)![1]);
  return {
    port,
    pid: child.pid!,
    read: async () => {
      out = '';
      child.kill('SIGUSR2');
      while (!out.includes('written')) await new Promise((r) => setTimeout(r, 20));
      return JSON.parse(readFileSync(file, 'utf8')) as {
        submits: number;
        submitted: [string, number][];
      };
    },
    stop: () => child.kill('SIGTERM'),
  };
}

async function runOne(store: 'embedded' | 'redis'): Promise<Result> {
  const dir = join(tmpdir(), `voxgate-bench-messages-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const smsc = await startSmsc(join(dir, `smsc-${store}.json`));
  const redis = store === 'redis' ? await startRedis() : null;
  const delivered = new Map<string, number>();
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const params = new URLSearchParams(body);
      if (params.get('Status') === 'delivered') delivered.set(params.get('To')!, now());
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/status`;
  const gateway = await startGatewayProcess({
    redisUrl: redis?.url ?? null,
    env: { VOXGATE_SMPP_URL: `smpp://voxgate:secret@127.0.0.1:${smsc.port}?window=200&mps=0` },
  });
  // The load goes through undici, the lightest HTTP client Node has: its CPU shares the
  // machine with the gateway's.
  const pool = new Pool(gateway.baseUrl, { connections: CONCURRENCY });
  const post = async (path: string, json: unknown): Promise<number> => {
    const res = await pool.request({
      path: `/v1/Account/${gateway.authId}/${path}`,
      method: 'POST',
      headers: { authorization: gateway.authorization, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
    await res.body.dump();
    return res.statusCode;
  };
  await post('Number/', { numbers: SRC, carrier: 'bench', region: 'bench' });
  await new Promise((r) => setTimeout(r, 1500)); // the bind comes up

  const sentAt = new Map<string, number>();
  const send = async (...destinations: string[]) => {
    const at = now();
    for (const dst of destinations) sentAt.set(dst, at);
    const status = await post('Message/', {
      src: SRC,
      dst: destinations.join('<'),
      text: 'Your code is 123456 @ voxgate',
      url: callbackUrl,
    });
    return status === 202;
  };
  const waitDelivered = async (destinations: string[]) => {
    const deadline = now() + 60_000;
    while (destinations.some((d) => !delivered.has(d)) && now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
  };

  /** CONCURRENCY requests in flight until every destination is sent; the failed ones. */
  const saturate = async (destinations: string[]) => {
    let next = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < destinations.length) {
          const batch = destinations.slice(next, next + PER_REQUEST);
          next += batch.length;
          if (!(await send(...batch))) failed += batch.length;
        }
      }),
    );
    return failed;
  };

  // Warm-up, not counted: the same load, so that what is measured is a gateway in service,
  // its hot paths compiled and its heap grown (without it the first seconds run slower).
  const warmUp = Array.from({ length: WARM_UP }, (_, k) => numberIn('447401', k));
  if ((await saturate(warmUp)) > 0) throw new Error('the warm-up had failed requests');
  await waitDelivered(warmUp);
  await new Promise((r) => setTimeout(r, 1000));

  // Saturated: CONCURRENCY requests in flight for MESSAGES messages.
  const saturated = Array.from({ length: MESSAGES }, (_, k) => numberIn('447400', k));
  const redisBefore = redis ? await redisUsage(redis.url) : null;
  const cpuBefore = cpuNow(gateway.pid, smsc.pid);
  const started = now();
  const failures = await saturate(saturated);
  await waitDelivered(saturated);
  const cpuAfter = cpuNow(gateway.pid, smsc.pid);
  const redisAfter = redis ? await redisUsage(redis.url) : null;
  const finished = Math.max(...saturated.map((d) => delivered.get(d) ?? 0));
  const seconds = (finished - started) / 1000;

  // Paced: one request every 1/PACED_RATE s, whatever the answers.
  const paced = Array.from({ length: PACED_MESSAGES }, (_, k) => numberIn('447402', k));
  let pacedFailures = 0;
  const pacedStart = now();
  const sends: Promise<void>[] = [];
  for (let k = 0; k < paced.length; k++) {
    const due = pacedStart + (k * 1000) / PACED_RATE;
    while (now() < due) await new Promise((r) => setTimeout(r, Math.max(0, due - now() - 1)));
    sends.push(send(paced[k]!).then((ok) => void (ok || pacedFailures++)));
  }
  await Promise.all(sends);
  await waitDelivered(paced);
  const pacedFinished = Math.max(...paced.map((d) => delivered.get(d) ?? 0));

  const submitted = new Map((await smsc.read()).submitted);
  const latencies = (destinations: string[]) => {
    const restToSubmit: number[] = [];
    const submitToCallback: number[] = [];
    for (const dst of destinations) {
      const at = sentAt.get(dst)!;
      const sub = submitted.get(dst);
      const cb = delivered.get(dst);
      if (sub !== undefined) restToSubmit.push(sub - at);
      if (sub !== undefined && cb !== undefined) submitToCallback.push(cb - sub);
    }
    return {
      restToSubmitMs: percentiles(restToSubmit),
      submitToCallbackMs: percentiles(submitToCallback),
    };
  };
  const deliveredOf = (destinations: string[]) => destinations.filter((d) => delivered.has(d));
  await gateway.stop();
  smsc.stop();
  await redis?.stop();
  receiver.close();
  await pool.close();
  rmSync(dir, { recursive: true, force: true });
  const perMessage = (before: number, after: number) => round(((after - before) * 1000) / MESSAGES);
  return {
    store,
    messages: MESSAGES,
    seconds: round(seconds),
    perSecond: Math.round(deliveredOf(saturated).length / seconds),
    lost: MESSAGES - deliveredOf(saturated).length + failures,
    ...latencies(saturated),
    gatewayCpuMsPerMessage: perMessage(cpuBefore.gateway, cpuAfter.gateway),
    smscCpuMsPerMessage: perMessage(cpuBefore.smsc, cpuAfter.smsc),
    harnessCpuMsPerMessage: perMessage(cpuBefore.harness, cpuAfter.harness),
    redisCpuMsPerMessage:
      redisBefore && redisAfter ? perMessage(redisBefore.cpu, redisAfter.cpu) : null,
    redisCommandsPerMessage:
      redisBefore && redisAfter
        ? round((redisAfter.commands - redisBefore.commands) / MESSAGES)
        : null,
    redisCommandMix:
      redisBefore && redisAfter
        ? Object.fromEntries(
            Object.entries(redisAfter.byCommand)
              .map(
                ([k, v]) => [k, round((v - (redisBefore.byCommand[k] ?? 0)) / MESSAGES)] as const,
              )
              .filter(([, v]) => v > 0)
              .sort((a, b) => b[1] - a[1]),
          )
        : null,
    paced: {
      perSecond: Math.round(deliveredOf(paced).length / ((pacedFinished - pacedStart) / 1000)),
      lost: PACED_MESSAGES - deliveredOf(paced).length + pacedFailures,
      ...latencies(paced),
    },
  };
}

/** redis-server's CPU seconds and commands processed so far. */
async function redisUsage(url: string) {
  const client = new Redis(url);
  try {
    const info = await client.info('all');
    const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)![1]);
    return {
      cpu: field('used_cpu_sys') + field('used_cpu_user'),
      commands: field('total_commands_processed'),
      byCommand: Object.fromEntries(
        [...info.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]),
      ),
    };
  } finally {
    client.disconnect();
  }
}

/** The k-th number of a block of a million under `prefix`. */
const numberIn = (prefix: string, k: number) => `${prefix}${String(1_000_000 + k).slice(1)}`;

function cpuNow(gatewayPid: number, smscPid: number) {
  const own = process.cpuUsage();
  return {
    gateway: processCpuSeconds(gatewayPid),
    smsc: processCpuSeconds(smscPid),
    harness: (own.user + own.system) / 1e6,
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;

const machine = describeMachine();
const speed = probeMachineSpeed();
const stores =
  values.store === 'both'
    ? (['embedded', 'redis'] as const)
    : [values.store as 'embedded' | 'redis'];
const results: Result[] = [];
for (const store of stores) results.push(await runOne(store));
const ms = (p: ReturnType<typeof percentiles>) => `${p.p50?.toFixed(1)} / ${p.p99?.toFixed(1)} ms`;
console.log(
  `bench:messages, ${MESSAGES} messages after ${WARM_UP} not counted, ${PER_REQUEST} per request, ${CONCURRENCY} requests in flight; ${machine.cpuModel}, ${machine.cores} cores, Node ${machine.node}; speed probe ${JSON.stringify(speed)}`,
);
console.log(
  '| store | messages/s end to end | lost | REST → submit_sm p50 / p99 | submit_sm → delivered callback p50 / p99 | CPU per message: gateway / SMSC / REST client and receiver / redis-server | Redis commands per message |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const r of results)
  console.log(
    `| ${r.store} | ${r.perSecond} | ${r.lost} | ${ms(r.restToSubmitMs)} | ${ms(r.submitToCallbackMs)} | ${r.gatewayCpuMsPerMessage} / ${r.smscCpuMsPerMessage} / ${r.harnessCpuMsPerMessage} / ${r.redisCpuMsPerMessage ?? '-'} ms | ${r.redisCommandsPerMessage ?? '-'} |`,
  );
console.log(`\nPaced at ${PACED_RATE} messages/s (${PACED_MESSAGES} messages):`);
console.log(
  '| store | messages/s | lost | REST → submit_sm p50 / p99 | submit_sm → delivered callback p50 / p99 |',
);
console.log('| --- | --- | --- | --- | --- |');
for (const r of results)
  console.log(
    `| ${r.store} | ${r.paced.perSecond} | ${r.paced.lost} | ${ms(r.paced.restToSubmitMs)} | ${ms(r.paced.submitToCallbackMs)} |`,
  );
const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19) + 'Z';
const json = JSON.stringify(
  {
    date: new Date().toISOString(),
    machine,
    speed,
    messages: MESSAGES,
    warmUpMessages: WARM_UP,
    concurrency: CONCURRENCY,
    destinationsPerRequest: PER_REQUEST,
    pacedRate: PACED_RATE,
    results,
  },
  null,
  2,
);
writeFileSync(`bench/results/messages-${stamp}.json`, json);
writeFileSync('bench/results/messages-latest.json', json);
