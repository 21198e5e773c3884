import type { InboundStep } from './inbound.js';
import type { OutboundStep } from './outbound.js';

const GOAL_RATE = 300;
const GOAL_PDD_P99_MS = 20;

const failuresText = (failures: Record<string, number>) =>
  Object.entries(failures)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');

/**
 * Where the machine's time went during a step, the same columns for both directions. The
 * gateway's threads and waits are known only when the bench started it (`threadsKnown`). Per
 * call: the main thread's CPU and how often it slept and was woken, over the calls placed in
 * the step (calls still running from before it stand in for those still running after it).
 */
function loadColumns(
  s: OutboundStep | InboundStep,
  threadsKnown: boolean,
): Record<string, number | string> {
  const known = (value: number) => (threadsKnown && Number.isFinite(value) ? value : '-');
  const perCall = (value: number, digits: number) =>
    known(Number((value / s.attempted).toFixed(digits)));
  return {
    'gw cpu%': Number.isNaN(s.cpu.gatewayPercent) ? '-' : s.cpu.gatewayPercent,
    'gw main%': known(s.cpu.gatewayThreadsPercent.main ?? 0),
    'main ms/call': perCall(s.cpu.gatewayMainSeconds * 1000, 2),
    'main sleeps/call': perCall(s.cpu.gatewayMainSleeps, 1),
    'health p99': s.gatewayHealthMs.p99 ?? '-',
    'sipp%': s.cpu.sippPercent,
    'bench%': s.cpu.benchPercent,
    'others%': s.cpu.othersPercent,
    'box%': s.cpu.machinePercent,
    'stolen ms': s.cpu.stolenMs,
    'main wait ms': known(s.cpu.gatewayMainWaitMs),
    'stall max ms': s.machineStalls.longestMs,
  };
}

export function printOutbound(steps: OutboundStep[], threadsKnown = true): void {
  if (steps.length === 0) return;
  console.log('outbound (POST Call/ -> carrier answers -> Speak, Hangup)');
  console.table(
    steps.map((s) => ({
      'rate /s': s.rate,
      'sent /s': s.sentPerSecond,
      attempted: s.attempted,
      completed: s.completed,
      'done /s': s.completedPerSecond,
      failed: s.failed,
      'pdd p50': s.pddMs.p50 ?? '-',
      'pdd p99': s.pddMs.p99 ?? '-',
      'gen pdd p99': s.generatorPddMs.p99 ?? '-',
      'api p99': s.apiMs.p99 ?? '-',
      'call p50': s.callMs.p50 ?? '-',
      ...loadColumns(s, threadsKnown),
      failures: failuresText(s.failures),
    })),
  );
}

export function printInbound(steps: InboundStep[], threadsKnown = true): void {
  if (steps.length === 0) return;
  console.log('inbound (SIPp INVITE -> application Speak, Wait -> SIPp BYE)');
  console.table(
    steps.map((s) => ({
      'rate /s': s.rate,
      attempted: s.attempted,
      ok: s.successful,
      'ok /s': s.successfulPerSecond,
      failed: s.failed,
      'answer ms': s.meanAnswerMs ?? '-',
      retrans: s.retransmissions,
      ...loadColumns(s, threadsKnown),
      failures: failuresText(s.failures),
    })),
  );
}

/**
 * Plain sentences on the goal: the highest clean rate each way and where it stopped. `where`
 * says what the figures ran on (by default: everything on this machine's cores).
 */
export function verdict(
  outbound: OutboundStep[],
  inbound: InboundStep[],
  cores: number,
  where = `${cores} cores shared by the gateway, SIPp, the application and the load generator`,
): string[] {
  const lines: string[] = [];
  const cleanOut = outbound.filter(
    (s) => s.failed === 0 && s.sipp.failed === 0 && s.sentPerSecond >= s.rate * 0.95,
  );
  const bestOut = cleanOut.at(-1);
  const firstBadOut = outbound.find((s) => !cleanOut.includes(s));
  lines.push(
    bestOut
      ? `outbound: highest clean rate ${bestOut.rate} calls/s (PDD on the ${bestOut.pddOn} p50 ${bestOut.pddMs.p50} ms, p99 ${bestOut.pddMs.p99} ms; by the generator's clock p99 ${bestOut.generatorPddMs.p99} ms; gateway CPU ${bestOut.cpu.gatewayPercent}% of a core)`
      : 'outbound: no clean rate',
  );
  if (firstBadOut)
    lines.push(
      `outbound: at ${firstBadOut.rate} calls/s ${firstBadOut.failed} of ${firstBadOut.attempted} failed (${failuresText(firstBadOut.failures)}), SIPp failed ${firstBadOut.sipp.failed}, gateway CPU ${firstBadOut.cpu.gatewayPercent}%, machine ${firstBadOut.cpu.machinePercent}% of ${cores * 100}%`,
    );
  const cleanIn = inbound.filter((s) => s.failed === 0 && Object.keys(s.failures).length === 0);
  const bestIn = cleanIn.at(-1);
  const firstBadIn = inbound.find((s) => !cleanIn.includes(s));
  lines.push(
    bestIn
      ? `inbound: highest clean rate ${bestIn.rate} calls/s (mean INVITE to 200 ${bestIn.meanAnswerMs} ms, gateway CPU ${bestIn.cpu.gatewayPercent}% of a core)`
      : 'inbound: no clean rate',
  );
  if (firstBadIn)
    lines.push(
      `inbound: at ${firstBadIn.rate} calls/s ${firstBadIn.failed} of ${firstBadIn.attempted} failed (${failuresText(firstBadIn.failures)}), gateway CPU ${firstBadIn.cpu.gatewayPercent}%, machine ${firstBadIn.cpu.machinePercent}% of ${cores * 100}%`,
    );
  const slow = outbound.find((s) => (s.pddMs.p99 ?? Infinity) > GOAL_PDD_P99_MS);
  if (slow)
    lines.push(
      `outbound: PDD p99 first above ${GOAL_PDD_P99_MS} ms at ${slow.rate} calls/s (${slow.pddMs.p99} ms on the ${slow.pddOn}; gateway /health p99 ${slow.gatewayHealthMs.p99} ms, gateway CPU ${slow.cpu.gatewayPercent}% with its main thread at ${slow.cpu.gatewayThreadsPercent.main ?? 0}%, machine ${slow.cpu.machinePercent}% of ${cores * 100}% with ${slow.cpu.othersPercent}% from other processes; the main thread waited ${slow.cpu.gatewayMainWaitMs} ms for a core and the hypervisor took ${slow.cpu.stolenMs} ms; the whole machine stood still ${slow.machineStalls.count} times for more than 4 ms, ${slow.machineStalls.totalMs} ms in all, the longest ${slow.machineStalls.longestMs} ms)`,
    );
  const goalStep = cleanOut.find((s) => s.rate >= GOAL_RATE);
  const met = goalStep !== undefined && (goalStep.pddMs.p99 ?? Infinity) <= GOAL_PDD_P99_MS;
  lines.push(
    `goal (>= ${GOAL_RATE} calls/s outbound with no failure, PDD p99 <= ${GOAL_PDD_P99_MS} ms): ${met ? 'met' : 'not met'} on ${where}`,
  );
  return lines;
}
