/**
 * How many digest REGISTERs a second does a registrar complete, and where does it start to fail?
 *
 *   npm run bench:sip-register [-- --target 127.0.0.1:5060 --endpoints endpoints.csv]
 *       [--transport udp|tcp] [--rates 500,1000,2000,3000] [--step-seconds 5]
 *
 * SIPp runs fixtures/sipp/register-digest.xml at each rate in turn (calls started per second,
 * -r with -rp 1s), each step for a few seconds, cycling through the endpoints: REGISTER, 401
 * (the MD5 challenge chosen among those offered), REGISTER with credentials, 200. It reports the
 * registrations completed per second, the failures by kind and SIPp's mean time from the first
 * REGISTER to the 200, prints a table and writes bench/results/sip-register-*.json.
 *
 * The target: --target (or VOXGATE_BENCH_SIP_TARGET) with --endpoints (or
 * VOXGATE_BENCH_SIP_ENDPOINTS), a file of `username;password` lines naming endpoints that exist
 * there. Without --target it measures, in one run, a SIPp stand-in registrar (the load
 * generator's own ceiling) and voxgate on its embedded store and on Redis, each started here.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  endpointRows,
  runSipp,
  startSippUas,
  type SipEndpoint,
  type SipTarget,
  type SipTransport,
  type SippResult,
} from '../../test/support/sipp.js';
import { freePort } from '../../test/support/free-port.js';
import { startRedis } from '../../test/support/redis-server.js';
import { startGatewayProcess } from '../api/gateway-process.js';
import { describeMachine } from '../api/machine.js';
import { describeRevision } from '../api/revision.js';
import { positiveInteger } from '../api/arguments.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

/** A registrar to load, with endpoints that exist on it. */
interface RegisterTarget {
  /** What was measured, for the results ("voxgate <commit>", "SIPp stub"). */
  description: string;
  address: SipTarget;
  transport: SipTransport;
  endpoints: SipEndpoint[];
  stop(): Promise<void>;
}

interface TargetRequest {
  transport: SipTransport;
  endpointCount: number;
  redisUrl: string | null;
}

/** The gateway as operators run it (dist/src/main.js), with endpoints made over its API. */
async function startVoxgate(request: TargetRequest): Promise<RegisterTarget> {
  const sipPort = await freePort();
  const gateway = await startGatewayProcess({
    redisUrl: request.redisUrl,
    env: { VOXGATE_SIP_PORT: String(sipPort) },
  });
  try {
    const endpoints: SipEndpoint[] = [];
    for (let i = 0; i < request.endpointCount; i++) {
      const password = randomBytes(9).toString('base64url');
      const res = await fetch(`${gateway.baseUrl}/v1/Account/${gateway.authId}/Endpoint/`, {
        method: 'POST',
        headers: { authorization: gateway.authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ username: `bench${i}`, password, alias: `bench${i}` }),
      });
      if (res.status !== 201) throw new Error(`endpoint create failed: ${await res.text()}`);
      const body = (await res.json()) as { username: string };
      endpoints.push({ username: body.username, password });
    }
    return {
      description: `voxgate (${request.redisUrl ? 'redis' : 'embedded store'})`,
      address: { host: '127.0.0.1', port: sipPort },
      transport: request.transport,
      endpoints,
      stop: () => gateway.stop(),
    };
  } catch (error) {
    await gateway.stop();
    throw error;
  }
}

/**
 * The same-run alternative: a SIPp registrar (fixtures/sipp/registrar-digest-stub.xml) that
 * challenges as voxgate does but checks no password and keeps no state, so it shows what the
 * load generator itself can drive on this machine.
 */
async function startStub(request: TargetRequest): Promise<RegisterTarget> {
  const stub = await startSippUas({
    scenario: 'registrar-digest-stub.xml',
    transport: request.transport,
    extraArgs: ['-default_behaviors', 'all,-bye'],
  });
  return {
    description: 'SIPp registrar-digest-stub.xml (no password check, no state)',
    address: { host: stub.host, port: stub.port },
    transport: request.transport,
    endpoints: Array.from({ length: request.endpointCount }, (_, i) => ({
      username: `bench${String(i).padStart(6, '0')}`,
      password: randomBytes(9).toString('base64url'),
    })),
    stop: async () => {
      await stub.stop();
    },
  };
}

interface Plan {
  target: SipTarget | null;
  endpointsFile: string | null;
  endpointCount: number;
  transport: SipTransport;
  rates: number[];
  stepSeconds: number;
}

interface RegisterStep {
  /** Registrations started per second. */
  rate: number;
  seconds: number;
  attempted: number;
  successful: number;
  failed: number;
  /** Successful registrations over SIPp's run time, start to last answer. */
  achievedPerSecond: number;
  /** SIPp's mean time from the first REGISTER to the 200, ms (SIPp counts whole ms). */
  meanRegisterMs: number | null;
  /** How many registrations took under each bound, ms (register-digest.xml's repartition). */
  registerMsHistogram: Record<string, number>;
  /** SIPp's failure counters that are not zero (FailedMaxUDPRetrans, ...). */
  failures: Record<string, number>;
  retransmissions: number;
  outcome: SippResult['outcome'];
  /** The first lines of SIPp's error trace, when something failed. */
  firstErrors: string[];
}

function readPlan(): Plan {
  const { values } = parseArgs({
    options: {
      target: { type: 'string', default: process.env.VOXGATE_BENCH_SIP_TARGET },
      endpoints: { type: 'string', default: process.env.VOXGATE_BENCH_SIP_ENDPOINTS },
      'endpoint-count': { type: 'string', default: '1000' },
      transport: { type: 'string', default: 'udp' },
      rates: { type: 'string', default: '500,1000,2000,3000' },
      'step-seconds': { type: 'string', default: '5' },
    },
  });
  let target: SipTarget | null = null;
  if (values.target) {
    const match = /^(.+):(\d+)$/.exec(values.target);
    if (!match) throw new Error(`Expected host:port for --target but received ${values.target}`);
    target = { host: match[1]!, port: positiveInteger('the target port', match[2]!) };
    if (!values.endpoints) throw new Error('--target needs --endpoints, a username;password file');
  }
  if (values.transport !== 'udp' && values.transport !== 'tcp')
    throw new Error(`Expected udp or tcp for --transport but received ${values.transport}`);
  return {
    target,
    endpointsFile: values.endpoints ?? null,
    endpointCount: positiveInteger('--endpoint-count', values['endpoint-count']),
    transport: values.transport,
    rates: values.rates.split(',').map((r) => positiveInteger('--rates', r.trim())),
    stepSeconds: positiveInteger('--step-seconds', values['step-seconds']),
  };
}

function readEndpoints(file: string): SipEndpoint[] {
  const endpoints = readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line, i) => {
      const [username, password, ...rest] = line.split(';');
      if (!username || !password || rest.length > 0)
        throw new Error(`${file} line ${i + 1}: expected username;password`);
      return { username, password };
    });
  if (endpoints.length === 0) throw new Error(`${file} names no endpoints`);
  return endpoints;
}

/** SIPp's durations read hh:mm:ss:micro. */
function durationMs(text: string | undefined): number | null {
  const parts = text?.split(':').map(Number);
  if (!parts || parts.length !== 4 || parts.some((n) => !Number.isFinite(n))) return null;
  const [h, m, s, us] = parts as [number, number, number, number];
  return Math.round((((h * 60 + m) * 60 + s) * 1000 + us / 1000) * 10) / 10;
}

async function runStep(target: RegisterTarget, rate: number, seconds: number) {
  const attempted = rate * seconds;
  const result = await runSipp({
    scenario: 'register-digest.xml',
    target: target.address,
    transport: target.transport,
    injectCsv: endpointRows(target.endpoints),
    calls: attempted,
    rate,
    ratePeriodMs: 1000,
    timeoutMs: seconds * 1000 + 60_000,
    // A failed registration has no dialog to end with a BYE.
    extraArgs: ['-default_behaviors', 'all,-bye'],
  });
  const failures: Record<string, number> = {};
  const registerMsHistogram: Record<string, number> = {};
  for (const [name, value] of Object.entries(result.stats)) {
    const failure = /^(Failed\w+)\(C\)$/.exec(name);
    if (failure && Number(value) > 0) failures[failure[1]!] = Number(value);
    const bucket = /^ResponseTimeRepartitionregister_(.+)$/.exec(name);
    if (bucket) registerMsHistogram[bucket[1]!] = Number(value);
  }
  const step: RegisterStep = {
    rate,
    seconds,
    attempted,
    successful: result.successful,
    failed: result.failed,
    achievedPerSecond: Math.round((result.successful / result.elapsedMs) * 1000),
    meanRegisterMs: durationMs(result.stats['ResponseTimeregister(C)']),
    registerMsHistogram,
    failures,
    retransmissions: Number(result.stats['Retransmissions(C)'] ?? 0),
    outcome: result.outcome,
    firstErrors: result.errors.slice(0, 20),
  };
  return step;
}

function printTable(steps: RegisterStep[]): void {
  const rows = steps.map((s) => ({
    'rate /s': s.rate,
    attempted: s.attempted,
    ok: s.successful,
    failed: s.failed,
    'achieved /s': s.achievedPerSecond,
    'mean ms': s.meanRegisterMs ?? '-',
    retrans: s.retransmissions,
    failures: Object.entries(s.failures)
      .map(([k, v]) => `${k}=${v}`)
      .join(' '),
  }));
  console.table(rows);
}

/** The registrars measured in one run when no --target is given. */
const STARTERS: { name: string; start: (r: TargetRequest) => Promise<RegisterTarget> }[] = [
  { name: 'stub', start: startStub },
  { name: 'voxgate-embedded', start: (r) => startVoxgate({ ...r, redisUrl: null }) },
  { name: 'voxgate-redis', start: startVoxgate },
];

async function measure(target: RegisterTarget, plan: Plan) {
  const steps: RegisterStep[] = [];
  try {
    for (const rate of plan.rates) {
      console.log(`${target.description}: ${rate} registrations/s for ${plan.stepSeconds} s ...`);
      steps.push(await runStep(target, rate, plan.stepSeconds));
    }
  } finally {
    await target.stop();
  }
  printTable(steps);
  return {
    description: target.description,
    transport: target.transport,
    endpoints: target.endpoints.length,
    steps,
  };
}

async function main(): Promise<void> {
  const plan = readPlan();
  const machine = describeMachine();
  const date = new Date().toISOString();
  const targets = [];
  if (plan.target) {
    targets.push(
      await measure(
        {
          description: `${plan.target.host}:${plan.target.port} (given)`,
          address: plan.target,
          transport: plan.transport,
          endpoints: readEndpoints(plan.endpointsFile!),
          stop: async () => {},
        },
        plan,
      ),
    );
  } else {
    const redis = await startRedis();
    try {
      for (const starter of STARTERS) {
        const target = await starter.start({
          transport: plan.transport,
          endpointCount: plan.endpointCount,
          redisUrl: redis.url,
        });
        targets.push({ name: starter.name, ...(await measure(target, plan)) });
      }
    } finally {
      await redis.stop();
    }
  }
  const run = {
    benchmark: 'sip-register',
    date,
    machine,
    revision: describeRevision(ROOT),
    loadAverageAfter: loadavg().map((n) => Math.round(n * 100) / 100),
    scenario: 'fixtures/sipp/register-digest.xml',
    targets,
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const json = `${JSON.stringify(run, null, 2)}\n`;
  for (const name of [
    `sip-register-${date.replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')}`,
    'sip-register-latest',
  ]) {
    writeFileSync(`${RESULTS_DIR}${name}.json`, json);
    console.log(`wrote bench/results/${name}.json`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
