/**
 * bench:cluster: what a cross-node control request costs. Two gateway nodes (their own
 * processes, as operators run them) share a redis-server and a main account; a SIPp callee
 * answers every call. Each round places one call through node A's API (both nodes idle, so A
 * runs it), waits for it to be answered, and hangs it up with DELETE Call/{uuid}/ on node B
 * (cross-node: B sends it to A over Redis) or on node A itself (local), alternately. The time
 * measured is the DELETE's, from the request to its 204, which the gateway sends once the
 * BYE has left node A and its 200 came back from SIPp: the BYE on the wire is inside it.
 * tcpdump on loopback (where it can run: root or CAP_NET_RAW) also times each DELETE on the
 * wire to its BYE on the wire, which is the control request's latency itself, without the
 * 200's round trip, the record and the answer's way back. Reports p50/p99 of both ways, local
 * and cross-node, and their difference.
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
import { startLoopbackCapture, tcpDataStarts, udpDataStarts } from '../api/loopback-capture.js';
import type { CapturedPacket } from '../../test/support/pcap.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '200' } } });
const ROUNDS = Number(values.rounds);

const redis = await startRedis();
const authId = newAuthId('MA');
const authToken = newAuthToken();
const authorization = `Basic ${Buffer.from(`${authId}:${authToken}`).toString('base64')}`;
const node = (id: string) =>
  startGatewayProcess({
    redisUrl: redis.url,
    env: {
      VOXGATE_NODE_ID: id,
      VOXGATE_AUTH_ID: authId,
      VOXGATE_AUTH_TOKEN: authToken,
      VOXGATE_INBOUND_CARRIERS: 'open',
    },
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

const wire = await startLoopbackCapture(
  [a, b]
    .map((gw) => tcpDataStarts(Number(new URL(gw.baseUrl).port), 'DELE'))
    .concat(udpDataStarts(uas.port, 'BYE '))
    .join(' or '),
);
if (!wire.ok) console.log(`DELETE to BYE on the wire not measured: ${wire.reason}`);

const local: number[] = [];
const cross: number[] = [];
/** Each counted round's call and where its DELETE went, for the wire's timings. */
const counted: { uuid: string; cross: boolean }[] = [];
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
  if (round >= 10) {
    // The first rounds warm up.
    (via === b ? cross : local).push(ms);
    counted.push({ uuid, cross: via === b });
  }
}

/**
 * Each counted round's DELETE on the wire to the first BYE after it (one call at a time, so
 * the next BYE is that call's), in ms, local and cross-node.
 */
function deleteToBye(packets: CapturedPacket[]) {
  const deletes = new Map<string, number>();
  const byes: number[] = [];
  for (const packet of packets) {
    const text = packet.payload.toString('latin1');
    if (packet.protocol === 'udp') byes.push(packet.atMicros);
    else {
      const uuid = /^DELETE \S*\/Call\/([0-9a-f-]+)\//.exec(text)?.[1];
      if (uuid && !deletes.has(uuid)) deletes.set(uuid, packet.atMicros);
    }
  }
  const ways = { local: [] as number[], cross: [] as number[] };
  for (const { uuid, cross } of counted) {
    const at = deletes.get(uuid);
    const bye = at === undefined ? undefined : byes.find((t) => t > at);
    if (at !== undefined && bye !== undefined)
      (cross ? ways.cross : ways.local).push((bye - at) / 1000);
  }
  return ways;
}
const captured = wire.ok ? await wire.capture.stop() : null;
const toBye = captured ? deleteToBye(captured.packets) : null;
const droppedPackets = captured?.droppedPackets ?? null;

/** What the cross-node way adds at p50 and p99, ms. */
function added(crossNode: number[], onOwner: number[]) {
  const c = percentiles(crossNode);
  const l = percentiles(onOwner);
  return {
    p50: +((c.p50 ?? 0) - (l.p50 ?? 0)).toFixed(1),
    p99: +((c.p99 ?? 0) - (l.p99 ?? 0)).toFixed(1),
  };
}

const result = {
  benchmark: 'cluster',
  date: new Date().toISOString(),
  machine: { ...describeMachine(), speed: probeMachineSpeed() },
  rounds: ROUNDS,
  hangupMs: { local: percentiles(local), crossNode: percentiles(cross) },
  addedMs: added(cross, local),
  /** DELETE on the wire to BYE on the wire (tcpdump); null where tcpdump could not run. */
  toByeOnTheWireMs: toBye
    ? {
        local: percentiles(toBye.local),
        crossNode: percentiles(toBye.cross),
        added: added(toBye.cross, toBye.local),
        rounds: toBye.local.length + toBye.cross.length,
        droppedPackets,
      }
    : { notMeasured: wire.ok ? null : wire.reason },
};
console.log(
  `bench:cluster, ${ROUNDS} hangups; ${result.machine.cpuModel}, ${result.machine.cores} cores\n` +
    `| DELETE Call/{uuid}/ on | p50 | p99 | max |\n| --- | --- | --- | --- |\n` +
    `| the node running the call | ${result.hangupMs.local.p50} ms | ${result.hangupMs.local.p99} ms | ${result.hangupMs.local.max} ms |\n` +
    `| another node (over Redis) | ${result.hangupMs.crossNode.p50} ms | ${result.hangupMs.crossNode.p99} ms | ${result.hangupMs.crossNode.max} ms |\n` +
    `added by the cross-node hop: p50 ${result.addedMs.p50} ms, p99 ${result.addedMs.p99} ms`,
);
if (toBye) {
  const {
    local: l,
    crossNode: c,
    added: d,
  } = result.toByeOnTheWireMs as {
    local: ReturnType<typeof percentiles>;
    crossNode: ReturnType<typeof percentiles>;
    added: { p50: number; p99: number };
  };
  console.log(
    `\nDELETE on the wire to BYE on the wire (tcpdump, ${toBye.local.length + toBye.cross.length} rounds):\n` +
      `| DELETE Call/{uuid}/ on | p50 | p99 | max |\n| --- | --- | --- | --- |\n` +
      `| the node running the call | ${l.p50} ms | ${l.p99} ms | ${l.max} ms |\n` +
      `| another node (over Redis) | ${c.p50} ms | ${c.p99} ms | ${c.max} ms |\n` +
      `added by the cross-node hop: p50 ${d.p50} ms, p99 ${d.p99} ms`,
  );
}
const stamp = result.date.replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
const json = JSON.stringify(result, null, 2) + '\n';
writeFileSync(`bench/results/cluster-${stamp}.json`, json);
writeFileSync('bench/results/cluster-latest.json', json);

await uas.stop();
await a.stop();
await b.stop();
await redis.stop();
app.close();
