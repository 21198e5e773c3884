/**
 * bench:cluster-kamailio: calls per second through Kamailio to two gateway nodes, against one
 * node called directly, in one run. Two nodes (their own processes, on 127.0.0.2 and
 * 127.0.0.3) share a redis-server and a main account; Kamailio (docker/kamailio/kamailio.cfg)
 * dispatches over them. SIPp calls a number whose application answers with a Wait, holds each
 * call one second and hangs up; each step runs ten seconds at one rate. Reports successful
 * calls per second, failures, SIPp's mean INVITE-to-200 time and the nodes' CPU per call.
 *
 * Usage: npm run bench:cluster-kamailio [-- --rates 50,100,200]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { newAuthId, newAuthToken } from '../../src/core/ids.js';
import { startKamailio, nodeUri } from '../../test/support/kamailio.js';
import { startRedis } from '../../test/support/redis-server.js';
import { runSipp, type SipTarget } from '../../test/support/sipp.js';
import { startGatewayProcess, type GatewayProcess } from '../api/gateway-process.js';
import { describeMachine } from '../api/machine.js';
import { durationMs } from '../calls/inbound.js';
import { probeMachineSpeed } from '../api/machine-speed.js';
import { processCpuSeconds } from '../api/process-cpu.js';

const { values } = parseArgs({ options: { rates: { type: 'string', default: '50,100,200' } } });
const RATES = values.rates.split(',').map(Number);
const STEP_SECONDS = 10;
const NUMBER = '14155550199';

const redis = await startRedis();
const authId = newAuthId('MA');
const authToken = newAuthToken();
const authorization = `Basic ${Buffer.from(`${authId}:${authToken}`).toString('base64')}`;

const app = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.setHeader('content-type', 'application/xml');
    res.end('<Response><Wait length="10"/></Response>');
  });
});
await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
const answerUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/answer`;

const node = (id: string, host: string) =>
  startGatewayProcess({
    redisUrl: redis.url,
    env: {
      VOXGATE_NODE_ID: id,
      VOXGATE_AUTH_ID: authId,
      VOXGATE_AUTH_TOKEN: authToken,
      // Calls come through Kamailio, and the numbers name no IncomingCarrier.
      VOXGATE_INBOUND_CARRIERS: 'open',
      VOXGATE_SIP_HOST: host,
      VOXGATE_SIP_PORT: '5060',
      VOXGATE_RTP_HOST: host,
      VOXGATE_PUBLIC_HOST: host,
    },
  });
const a = await node('bench-a', '127.0.0.2');
const b = await node('bench-b', '127.0.0.3');
const post = async (gw: GatewayProcess, resource: string, body: object) => {
  const res = await fetch(`${gw.baseUrl}/v1/Account/${authId}/${resource}/`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`POST ${resource}/ answered ${res.status}`);
  return (await res.json()) as Record<string, string>;
};
const application = await post(a, 'Application', { app_name: 'bench', answer_url: answerUrl });
await post(a, 'Number', {
  numbers: NUMBER,
  carrier: 'Own SIP',
  region: 'West',
  app_id: application.app_id!,
});

const nodes: SipTarget[] = [
  { host: '127.0.0.2', port: 5060 },
  { host: '127.0.0.3', port: 5060 },
];
// As a deployment sizes it: at 200 calls/s the tests' 32 MB of shared memory runs out.
const kamailio = await startKamailio({ nodes, sharedMemoryMb: 256 });
await kamailio.waitForStates(Object.fromEntries(nodes.map((n) => [nodeUri(n), 'AP' as const])));

interface Step {
  target: string;
  rate: number;
  attempted: number;
  successful: number;
  failed: number;
  successfulPerSecond: number;
  meanInviteTo200Ms: number | null;
  nodeCpuMsPerCall: number;
  /** SIPp's first error lines, when calls failed. */
  sippFirstErrors: string[];
}

async function step(name: string, target: SipTarget, rate: number): Promise<Step> {
  const calls = rate * STEP_SECONDS;
  const cpu = () => processCpuSeconds(a.pid) + processCpuSeconds(b.pid);
  const before = cpu();
  const started = Date.now();
  const result = await runSipp({
    scenario: 'uac-invite.xml',
    target,
    calls,
    rate,
    extraArgs: ['-s', NUMBER, '-d', '1000'],
    timeoutMs: (STEP_SECONDS + 30) * 1000,
  });
  const seconds = (Date.now() - started) / 1000;
  const used = cpu() - before;
  const rtt = result.stats['ResponseTime1(C)'];
  return {
    target: name,
    rate,
    attempted: calls,
    successful: result.successful,
    failed: result.failed,
    successfulPerSecond: Math.round((result.successful / seconds) * 10) / 10,
    meanInviteTo200Ms: durationMs(rtt),
    nodeCpuMsPerCall: Math.round(((used * 1000) / Math.max(1, result.successful)) * 100) / 100,
    sippFirstErrors: result.errors.slice(0, 5),
  };
}

const steps: Step[] = [];
for (const rate of RATES) {
  steps.push(await step('one node directly', nodes[0]!, rate));
  steps.push(await step('Kamailio, two nodes', { host: kamailio.host, port: kamailio.port }, rate));
}

const result = {
  benchmark: 'cluster-kamailio',
  date: new Date().toISOString(),
  machine: { ...describeMachine(), speed: probeMachineSpeed() },
  stepSeconds: STEP_SECONDS,
  holdMs: 1000,
  steps,
};
console.log(
  `bench:cluster-kamailio; ${result.machine.cpuModel}, ${result.machine.cores} cores\n` +
    '| target | calls/s offered | successful/s | failed | mean INVITE→200 | nodes CPU per call |\n' +
    '| --- | --- | --- | --- | --- | --- |\n' +
    steps
      .map(
        (s) =>
          `| ${s.target} | ${s.rate} | ${s.successfulPerSecond} | ${s.failed} | ${s.meanInviteTo200Ms ?? '-'} ms | ${s.nodeCpuMsPerCall} ms |`,
      )
      .join('\n') +
    steps
      .filter((s) => s.failed > 0)
      .map(
        (s) =>
          `\n${s.target} at ${s.rate}/s, SIPp's first errors:\n${s.sippFirstErrors.join('\n')}`,
      )
      .join(''),
);
if (steps.some((s) => s.failed > 0))
  console.log(
    `Kamailio's first errors:\n${kamailio
      .output()
      .split('\n')
      .filter((line) => /ERROR|WARNING|CRITICAL/.test(line))
      .slice(0, 8)
      .join('\n')}`,
  );
const stamp = result.date.replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
const json = JSON.stringify(result, null, 2) + '\n';
writeFileSync(`bench/results/cluster-kamailio-${stamp}.json`, json);
writeFileSync('bench/results/cluster-kamailio-latest.json', json);

await kamailio.stop();
await a.stop();
await b.stop();
await redis.stop();
app.close();
