/**
 * How well does answering-machine detection tell people from machines, and how fast?
 *
 *   npm run bench:amd [-- --concurrency 6 --per-category 27]
 *
 * Generates the corpus (corpus.ts: 9 categories, humans and machines, espeak-ng and flite
 * voices, noise, telephone band, mu-law) into a cache directory, then plays every clip into a
 * real outbound call: POST Call/ with machine_detection=true (synchronous, the gateway's
 * default thresholds) to a SIPp carrier whose SDP points at a callee's RTP line, which plays
 * the clip from the first packet the gateway sends. The verdict is read from the call record
 * (machine_detection: result, decision_ms from the answer), the answer_url's Machine checked
 * against it. The thresholds were tuned (offline.ts) on the `tune` third of each category;
 * the figures that count are those of the `report` two thirds, printed apart. Unknown is
 * Machine=false on the wire, so it counts as right for a human and wrong for a machine.
 * Writes bench/results/amd-*.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_MACHINE_DETECTION } from '../../src/media/pipeline/machine-classifier.js';
import { ClientApp } from '../../test/support/client-app.js';
import { startGateway, type TestGateway } from '../../test/support/gateway.js';
import { RtpPeer } from '../../test/support/rtp-peer.js';
import { startSippUas } from '../../test/support/sipp.js';
import { describeMachine } from '../api/machine.js';
import { describeRevision } from '../api/revision.js';
import { ClipLine } from './callee.js';
import { corpusSpecs, renderCorpus, type Clip } from './corpus.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

interface Outcome {
  id: string;
  category: Clip['category'];
  label: Clip['label'];
  split: Clip['split'];
  voice: string;
  noiseDbfs: number;
  result: 'machine' | 'human' | 'unknown' | 'failed';
  reason: string;
  /** From the answer to the verdict, as the gateway measured it. */
  decisionMs: number | null;
  /** Machine on the answer_url request. */
  machineParam: string | null;
}

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '6' },
    'per-category': { type: 'string', default: '27' },
  },
});
const concurrency = Number(values.concurrency);
const perCategory = Number(values['per-category']);

const started = Date.now();
const clips = renderCorpus(corpusSpecs(perCategory));
console.log(`corpus: ${clips.length} clips ready in ${Date.now() - started} ms`);

const gw = await startGateway({ listen: true, env: { VOXGATE_LOG_LEVEL: 'warn' } });
const app = await ClientApp.start();
app.serve('/answer', { body: '<Response><Hangup/></Response>' });

const outcomes: Outcome[] = [];
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < clips.length) {
      const clip = clips[next++]!;
      outcomes.push(await runClip(gw, app, clip));
      if (outcomes.length % 20 === 0) console.log(`${outcomes.length}/${clips.length} calls`);
    }
  }),
);
await gw.close();
await app.close();

async function runClip(gw: TestGateway, app: ClientApp, clip: Clip): Promise<Outcome> {
  const base = {
    id: clip.id,
    category: clip.category,
    label: clip.label,
    split: clip.split,
    voice: `${clip.voice.engine}:${clip.voice.name}@${clip.voice.rate.toFixed(2)}`,
    noiseDbfs: clip.noiseDbfs,
  };
  const failed = (reason: string): Outcome => ({
    ...base,
    result: 'failed',
    reason,
    decisionMs: null,
    machineParam: null,
  });
  const peer = await RtpPeer.open();
  const uas = await startCarrier(peer.port).catch((error: Error) => error);
  if (uas instanceof Error) {
    await peer.close();
    return failed(`SIPp did not start: ${uas.message.slice(0, 200)}`);
  }
  const line = new ClipLine(peer);
  const to = `sip:clip-${clip.id}@127.0.0.1:${uas.port}`;
  try {
    const response = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
      json: {
        from: '+14155550100',
        to,
        answer_url: `${app.baseUrl}/answer`,
        hangup_url: `${app.baseUrl}/hangup`,
        machine_detection: 'true',
      },
    });
    if (response.status !== 201) return failed(`POST Call/ answered ${response.status}`);
    if ((await line.play(clip.ulaw)) === null) return failed('no RTP from the gateway');
    const hangup = await waitFor(() => app.requestsTo('/hangup').find((r) => r.params.To === to));
    if (!hangup) return failed('no hangup callback');
    const answer = app.requestsTo('/answer').find((r) => r.params.To === to);
    const record = await gw.request(
      'GET',
      `/v1/Account/${gw.main.id}/Call/${hangup.params.CallUUID}/`,
    );
    const detection = record.body?.machine_detection;
    if (!detection) return failed('no machine_detection on the record');
    return {
      ...base,
      result: detection.result,
      reason: detection.reason,
      decisionMs: detection.decision_ms,
      machineParam: answer?.params.Machine ?? null,
    };
  } finally {
    line.stop();
    await uas.stop();
    await peer.close();
  }
}

/** SIPp as the carrier; started again when its own RTP port was taken by another start. */
async function startCarrier(rtpPort: number, attempts = 4) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startSippUas({
        scenario: 'carrier-answer.xml',
        variables: { rtp_port: String(rtpPort) },
      });
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

async function waitFor<T>(find: () => T | undefined, timeoutMs = 20_000): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const pct = (n: number, of: number) => (of === 0 ? null : Math.round((n / of) * 1000) / 10);

function summarize(set: Outcome[]) {
  const humans = set.filter((o) => o.label === 'human');
  const machines = set.filter((o) => o.label === 'machine');
  const right = set.filter((o) => (o.result === 'machine') === (o.label === 'machine'));
  const times = (of: Outcome[]) =>
    of.map((o) => o.decisionMs).filter((t): t is number => t !== null);
  const categories = [...new Set(set.map((o) => o.category))].map((category) => {
    const of = set.filter((o) => o.category === category);
    const ok = of.filter((o) => (o.result === 'machine') === (o.label === 'machine'));
    return { category, clips: of.length, accuracyPercent: pct(ok.length, of.length) };
  });
  return {
    clips: set.length,
    humans: humans.length,
    machines: machines.length,
    accuracyPercent: pct(right.length, set.length),
    humansAsMachinePercent: pct(humans.filter((o) => o.result === 'machine').length, humans.length),
    machinesMissedPercent: pct(
      machines.filter((o) => o.result !== 'machine').length,
      machines.length,
    ),
    unknownPercent: pct(set.filter((o) => o.result === 'unknown').length, set.length),
    failedCalls: set.filter((o) => o.result === 'failed').length,
    decisionMs: {
      humans: { p50: percentile(times(humans), 50), p95: percentile(times(humans), 95) },
      machines: { p50: percentile(times(machines), 50), p95: percentile(times(machines), 95) },
      all: { p50: percentile(times(set), 50), p95: percentile(times(set), 95) },
    },
    categories,
  };
}

outcomes.sort((a, b) => a.id.localeCompare(b.id));
const report = summarize(outcomes.filter((o) => o.split === 'report'));
const tune = summarize(outcomes.filter((o) => o.split === 'tune'));
const mismatched = outcomes.filter(
  (o) => o.result !== 'failed' && o.machineParam !== String(o.result === 'machine'),
);
const goals = {
  accuracyPercent: { goal: '>= 90', met: (report.accuracyPercent ?? 0) >= 90 },
  humansAsMachinePercent: { goal: '<= 3', met: (report.humansAsMachinePercent ?? 100) <= 3 },
  medianDecisionMs: { goal: '<= 2500', met: (report.decisionMs.all.p50 ?? Infinity) <= 2500 },
};
console.log('report split (two thirds of each category, not tuned on):');
console.log(JSON.stringify(report, null, 2));
console.log('tune split:', JSON.stringify({ ...tune, categories: undefined }));
console.log('goals:', JSON.stringify(goals));
if (mismatched.length > 0)
  console.log(`answer_url Machine disagreed with the record on ${mismatched.length} calls`);

const date = new Date();
const json = `${JSON.stringify(
  {
    benchmark: 'amd',
    date: date.toISOString(),
    machine: describeMachine(),
    revision: describeRevision(ROOT),
    settings: {
      mode: 'machine_detection=true (synchronous), answer XML <Hangup/>',
      thresholds: DEFAULT_MACHINE_DETECTION,
      tunedOn:
        'the tune split: the 1st, 4th, 7th... clip of each category (a third); reported: the other two thirds',
      concurrency,
      corpus: `${clips.length} clips, ${perCategory} per category; espeak-ng and flite voices; noise -55 to -35 dBFS; 300-3400 Hz; mu-law (30 % with a second tandem round trip)`,
      sharedMachine: 'gateway, SIPp, the callee lines and the application ran on this machine',
    },
    report,
    tune,
    goals,
    answerMachineMismatches: mismatched.length,
    outcomes,
  },
  null,
  2,
)}\n`;
mkdirSync(RESULTS_DIR, { recursive: true });
const stamp = date
  .toISOString()
  .replace(/\.\d+Z$/, 'Z')
  .replace(/:/g, '-');
writeFileSync(`${RESULTS_DIR}amd-${stamp}.json`, json);
writeFileSync(`${RESULTS_DIR}amd-latest.json`, json);
console.log(`wrote bench/results/amd-${stamp}.json`);
