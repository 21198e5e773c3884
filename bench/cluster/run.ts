/**
 * bench:cluster: what a cross-node control request costs. Two gateway nodes (their own
 * processes, as operators run them) share a redis-server and a main account; a SIPp callee
 * answers every call. Each round places one call through node A's API (both nodes idle, so A
 * runs it), waits for it to be answered, and hangs it up with DELETE Call/{uuid}/ on node B
 * (cross-node: B sends it to A over Redis) or on node A itself (local), alternately. The time
 * measured is the DELETE's, from the request to its 204, which the gateway sends once the
 * BYE has left node A and its 200 came back from SIPp: the BYE on the wire is inside it.
 * Reports p50/p99 of both and their difference.
 *
 * Usage: npm run bench:cluster [-- --rounds 200]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { newAuthId, newAuthToken } from '../../src/core/ids.js';
import { startRedis } from '../../test/support/redis-server.js';
import { startSippUas } from '../../test/support/sipp.js';
import { startGatewayProcess, type GatewayProcess } from '../api/gateway-process.js';
import { describeMachine } from '../api/machine.js';
import { probeMachineSpeed } from '../api/machine-speed.js';
import { percentiles } from '../calls/stats.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '200' } } });
const ROUNDS = Number(values.rounds);

const redis = await startRedis();
const authId = newAuthId('MA');
const authToken = newAuthToken();
const authorization = `Basic ${Buffer.from(`${authId}:${authToken}`).toString('base64')}`;
const node = (id: string) =>
  startGatewayProcess({
    redisUrl: redis.url,
    env: { VOXGATE_NODE_ID: id, VOXGATE_AUTH_ID: authId, VOXGATE_AUTH_TOKEN: authToken },
  });
const a = await node('bench-a');
const b = await node('bench-b');
const uas = await startSippUas({ scenario: 'uas-invite.xml' });

// The application: every call waits; the answer request tells its uuid.
const answered = new Map<string, (uuid: string) => void>();
const app = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    const params = new URLSearchParams(body);
    answered.get(params.get('RequestUUID') ?? '')?.(params.get('CallUUID') ?? '');
    res.setHeader('content-type', 'application/xml');
    res.end('<Response><Wait length="60"/></Response>');
  });
});
await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
const answerUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/answer`;

const api = async (gw: GatewayProcess, method: string, path: string, json?: unknown) => {
  const res = await fetch(`${gw.baseUrl}/v1/Account/${authId}/${path}`, {
    method,
    headers:
      json === undefined
        ? { authorization }
        : { authorization, 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, string>) : {} };
};

// The nodes see each other before the first round.
for (;;) {
  const health = (await (await fetch(`${a.baseUrl}/health`)).json()) as { peers?: unknown[] };
  if ((health.peers?.length ?? 0) === 2) break;
  await new Promise((r) => setTimeout(r, 100));
}

const local: number[] = [];
const cross: number[] = [];
for (let round = 0; round < ROUNDS + 10; round++) {
  const fired = await api(a, 'POST', 'Call/', {
    from: '+14155550100',
    to: `sip:bench@127.0.0.1:${uas.port}`,
    answer_url: answerUrl,
  });
  if (fired.status !== 201) throw new Error(`POST Call/ answered ${fired.status}`);
  const uuid = await new Promise<string>((resolve) =>
    answered.set(fired.body.request_uuid!, resolve),
  );
  const via = round % 2 === 0 ? b : a;
  const started = performance.now();
  const ended = await api(via, 'DELETE', `Call/${uuid}/`);
  const ms = performance.now() - started;
  if (ended.status !== 204) throw new Error(`DELETE answered ${ended.status}`);
  if (round >= 10) (via === b ? cross : local).push(ms); // the first rounds warm up
}

const result = {
  benchmark: 'cluster',
  date: new Date().toISOString(),
  machine: { ...describeMachine(), speed: probeMachineSpeed() },
  rounds: ROUNDS,
  hangupMs: { local: percentiles(local), crossNode: percentiles(cross) },
  addedMs: {
    p50: +((percentiles(cross).p50 ?? 0) - (percentiles(local).p50 ?? 0)).toFixed(1),
    p99: +((percentiles(cross).p99 ?? 0) - (percentiles(local).p99 ?? 0)).toFixed(1),
  },
};
console.log(
  `bench:cluster, ${ROUNDS} hangups; ${result.machine.cpuModel}, ${result.machine.cores} cores\n` +
    `| DELETE Call/{uuid}/ on | p50 | p99 | max |\n| --- | --- | --- | --- |\n` +
    `| the node running the call | ${result.hangupMs.local.p50} ms | ${result.hangupMs.local.p99} ms | ${result.hangupMs.local.max} ms |\n` +
    `| another node (over Redis) | ${result.hangupMs.crossNode.p50} ms | ${result.hangupMs.crossNode.p99} ms | ${result.hangupMs.crossNode.max} ms |\n` +
    `added by the cross-node hop: p50 ${result.addedMs.p50} ms, p99 ${result.addedMs.p99} ms`,
);
const stamp = result.date.replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
const json = JSON.stringify(result, null, 2) + '\n';
writeFileSync(`bench/results/cluster-${stamp}.json`, json);
writeFileSync('bench/results/cluster-latest.json', json);

await uas.stop();
await a.stop();
await b.stop();
await redis.stop();
app.close();
