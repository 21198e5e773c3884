/**
 * bench:messages — SMS end to end: REST sends (one destination per request, many in flight) →
 * the gateway → an SMSC simulator in another process (answers at once, DELIVRD receipt per
 * part) → receipts → delivered status callbacks to a receiver here. Once on the embedded store
 * and once on Redis. Reports messages/s with none lost, the REST request to submit_sm and the
 * submit_sm to delivered callback (receipt sent right after the answer) at p50/p99, and gateway
 * CPU per message.
 *
 * Usage: npm run build && npm run bench:messages [-- --messages 10000 --concurrency 64]
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startRedis } from '../../test/support/redis-server.js';
import { startGatewayProcess } from '../api/gateway-process.js';
import { describeMachine } from '../api/machine.js';
import { processCpuSeconds } from '../api/process-cpu.js';
import { percentiles } from '../calls/stats.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '64' },
    store: { type: 'string', default: 'both' },
  },
});
const MESSAGES = Number(values.messages);
const CONCURRENCY = Number(values.concurrency);
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
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const post = (path: string, json: unknown) =>
    new Promise<number>((resolve, reject) => {
      const body = JSON.stringify(json);
      const req = request(
        `${gateway.baseUrl}/v1/Account/${gateway.authId}/${path}`,
        {
          method: 'POST',
          agent,
          headers: { authorization: gateway.authorization, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  await post('Number/', { numbers: SRC, carrier: 'bench', region: 'bench' });
  await new Promise((r) => setTimeout(r, 1500)); // the bind comes up
  const destination = (k: number) => `447400${String(1_000_000 + k).slice(1)}`;
  // Warm-up, not counted.
  for (let k = 0; k < 200; k++)
    await post('Message/', {
      src: SRC,
      dst: `447401${String(1_000_000 + k).slice(1)}`,
      text: 'warm up',
    });
  await new Promise((r) => setTimeout(r, 1000));

  const sentAt = new Map<string, number>();
  const cpuBefore = processCpuSeconds(gateway.pid);
  const started = now();
  let next = 0;
  let failures = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < MESSAGES) {
        const dst = destination(next++);
        sentAt.set(dst, now());
        const status = await post('Message/', {
          src: SRC,
          dst,
          text: 'Your code is 123456 @ voxgate',
          url: callbackUrl,
        });
        if (status !== 202) failures++;
      }
    }),
  );
  const deadline = now() + 60_000;
  while (delivered.size < MESSAGES && now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const finished = Math.max(...delivered.values());
  const cpuAfter = processCpuSeconds(gateway.pid);
  const smscData = await smsc.read();
  const submitted = new Map(smscData.submitted);
  const restToSubmit: number[] = [];
  const submitToCallback: number[] = [];
  for (const [dst, at] of sentAt) {
    const sub = submitted.get(dst);
    const cb = delivered.get(dst);
    if (sub !== undefined) restToSubmit.push(sub - at);
    if (sub !== undefined && cb !== undefined) submitToCallback.push(cb - sub);
  }
  const seconds = (finished - started) / 1000;
  await gateway.stop();
  smsc.stop();
  await redis?.stop();
  receiver.close();
  agent.destroy();
  rmSync(dir, { recursive: true, force: true });
  return {
    store,
    messages: MESSAGES,
    seconds: round(seconds),
    perSecond: Math.round(delivered.size / seconds),
    lost: MESSAGES - delivered.size + failures,
    restToSubmitMs: percentiles(restToSubmit),
    submitToCallbackMs: percentiles(submitToCallback),
    gatewayCpuMsPerMessage: round(((cpuAfter - cpuBefore) * 1000) / MESSAGES),
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;

const machine = describeMachine();
const stores =
  values.store === 'both'
    ? (['embedded', 'redis'] as const)
    : [values.store as 'embedded' | 'redis'];
const results: Result[] = [];
for (const store of stores) results.push(await runOne(store));
console.log(
  `bench:messages, ${MESSAGES} messages, ${CONCURRENCY} requests in flight; ${machine.cpuModel}, ${machine.cores} cores, Node ${machine.node}`,
);
console.log(
  '| store | messages/s end to end | lost | REST → submit_sm p50 / p99 | submit_sm → delivered callback p50 / p99 | gateway CPU per message |',
);
console.log(
  '| ----- | --------------------- | ---- | -------------------------- | ---------------------------------------- | ----------------------- |',
);
for (const r of results)
  console.log(
    `| ${r.store} | ${r.perSecond} | ${r.lost} | ${r.restToSubmitMs.p50?.toFixed(1)} / ${r.restToSubmitMs.p99?.toFixed(1)} ms | ${r.submitToCallbackMs.p50?.toFixed(1)} / ${r.submitToCallbackMs.p99?.toFixed(1)} ms | ${r.gatewayCpuMsPerMessage} ms |`,
  );
const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19) + 'Z';
const json = JSON.stringify(
  {
    date: new Date().toISOString(),
    machine,
    messages: MESSAGES,
    concurrency: CONCURRENCY,
    results,
  },
  null,
  2,
);
writeFileSync(`bench/results/messages-${stamp}.json`, json);
writeFileSync('bench/results/messages-latest.json', json);
