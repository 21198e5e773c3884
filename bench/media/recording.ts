/**
 * What does recording cost a media worker, and does a worker busy with 100 recordings keep
 * every file whole?
 *
 *   npm run bench:recording [-- --calls 100 --seconds 10]
 *
 * One media worker (this process) holds `calls` sessions; a child process plays their phones,
 * each sending numbered PCMU (frame k a tone of its own, recording-frames.ts) every 20 ms.
 * The same calls run `seconds` unrecorded, then `seconds` with every one recorded in stereo:
 * the worker thread's CPU in each window gives the cost per recorded call-second, the files
 * their disk bytes per second. Each file is then read back and its caller channel checked
 * frame by frame: the largest gap (a frame missing or late) of each file. Prints a table and
 * writes bench/results/recording-*.json with the machine and its load.
 */
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { RecordingOutcome } from '../../src/media/recording/recording-spec.js';
import { MediaWorkerPool } from '../../src/media/worker/media-worker-pool.js';
import { describeMachine } from '../api/machine.js';
import { describeRevision } from '../api/revision.js';
import { gapsOf } from './recording-frames.js';
import { threadIds, threadsCpuSeconds } from './relay-threads.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const LOAD = fileURLToPath(new URL('./recording-load.ts', import.meta.url));
const PCMU = { encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const };

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '10' },
  },
});
const calls = Number(values.calls);
const seconds = Number(values.seconds);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface SenderCounts {
  sent: number;
  ticks: number;
  lateTicks: number;
  maxLateMs: number;
  late: { at: number; ms: number }[];
}

/**
 * Whether a gap at `at` (epoch ms) in a file lines up with a tick the phones ran late: the
 * frames were sent late, so the gap is the sender's, not the worker's.
 */
function senderMade(at: number, late: SenderCounts['late']): boolean {
  return late.some((tick) => tick.ms >= 15 && Math.abs(at - tick.at) <= tick.ms + 100);
}

/** The phones' process, asked by id. */
function startPhones() {
  const child = fork(LOAD, [], { execArgv: ['--import', 'tsx'] });
  const pending = new Map<number, (reply: unknown) => void>();
  let sequence = 0;
  child.on('message', (m: { id: number; reply: unknown }) => pending.get(m.id)?.(m.reply));
  return {
    ask: <T>(request: object): Promise<T> =>
      new Promise((resolve) => {
        const id = ++sequence;
        pending.set(id, resolve as (reply: unknown) => void);
        child.send({ id, request });
      }),
    close: () => child.kill(),
  };
}

async function main() {
  const machine = describeMachine();
  const dir = await mkdtemp(join(tmpdir(), 'voxgate-bench-rec-'));
  const before = new Set(threadIds());
  const pool = new MediaWorkerPool(
    { onEvent: () => {} },
    {
      size: 1,
      settings: {
        rtpPorts: { min: 30000, max: 30000 + 4 * calls + 100 },
        rtpHost: '127.0.0.1',
        cname: 'bench-recording',
      },
    },
  );
  await pool.stats();
  const worker = threadIds().filter((tid) => !before.has(tid));
  const phones = startPhones();
  const phonePorts = await phones.ask<number[]>({ type: 'open', count: calls });
  const sessions = await Promise.all(
    phonePorts.map((port, i) =>
      pool.createSession(`call${i}`, {
        formats: [PCMU],
        remote: { address: '127.0.0.1', port },
      }),
    ),
  );
  await phones.ask({ type: 'start', targets: sessions.map((s) => s.port) });
  await sleep(1000);

  const window = async () => {
    const cpu = threadsCpuSeconds(worker);
    const at = performance.now();
    await sleep(seconds * 1000);
    return { cpu: threadsCpuSeconds(worker) - cpu, s: (performance.now() - at) / 1000 };
  };
  const plain = await window();
  const outcomes = sessions.map(
    (_, i) =>
      pool.send({
        type: 'startRecording',
        sessionId: `call${i}`,
        recording: { recordingId: `r${i}`, path: join(dir, `r${i}.wav`), channels: 2 },
      }) as Promise<RecordingOutcome>,
  );
  const recorded = await window();
  await Promise.all(
    sessions.map((_, i) => pool.send({ type: 'stopRecording', sessionId: `call${i}` })),
  );
  const ended = await Promise.all(outcomes);
  const sender = await phones.ask<SenderCounts>({ type: 'stop' });
  phones.close();
  await pool.close();

  const files = await Promise.all(
    ended.map(async (outcome, i) => {
      const path = join(dir, `r${i}.wav`);
      const wav = await readFile(path);
      const left = new Int16Array((wav.length - 44) / 4);
      for (let k = 0; k < left.length; k++) left[k] = wav.readInt16LE(44 + k * 4);
      return { outcome, bytes: (await stat(path)).size, ...gapsOf(left) };
    }),
  );
  await rm(dir, { recursive: true, force: true });

  const perCallSecondUs = ((recorded.cpu / recorded.s - plain.cpu / plain.s) / calls) * 1e6;
  const totalMs = files.reduce((n, f) => n + f.outcome.durationMs, 0);
  const totalBytes = files.reduce((n, f) => n + f.bytes, 0);
  const gaps = files.map((f) => f.largestGapMs).sort((a, b) => a - b);
  // Gaps the worker made: those that do not line up with the sender running late.
  const workerGaps = files.map((f) =>
    Math.max(
      0,
      ...f.where
        .filter((g) => !senderMade(f.outcome.startedAt + g.atMs, sender.late))
        .map((g) => g.ms),
    ),
  );
  const result = {
    calls,
    seconds,
    channels: 2,
    workerCpuPercentUnrecorded: Number(((plain.cpu / plain.s) * 100).toFixed(1)),
    workerCpuPercentRecorded: Number(((recorded.cpu / recorded.s) * 100).toFixed(1)),
    workerCpuPerRecordedCallSecondUs: Math.round(perCallSecondUs),
    diskBytesPerRecordedSecond: Math.round(totalBytes / (totalMs / 1000)),
    failed: ended.filter((o) => o.state !== 'completed').length,
    largestGapMs: gaps.at(-1),
    filesWithGapOver30Ms: gaps.filter((g) => g > 30).length,
    filesWithAnyGap: files.filter((f) => f.gaps > 0).length,
    medianLargestGapMs: gaps[Math.floor(gaps.length / 2)],
    largestGapNotFromSenderMs: Math.max(...workerGaps),
    filesWithGapNotFromSender: workerGaps.filter((g) => g > 0).length,
    sender: { ...sender, late: sender.late.slice(0, 20) },
    /** The gaps of the first files: where (ms into the file) and how long. */
    gapsOfFirstFiles: files.slice(0, 5).map((f) => ({ ms: f.outcome.durationMs, gaps: f.where })),
  };
  console.table([{ ...result, sender: undefined, gapsOfFirstFiles: undefined }]);
  console.log('phones (sender process):', sender);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const body = {
    machine,
    revision: describeRevision(ROOT),
    loadAverageAfter: loadavg(),
    result,
    notes: [
      'worker cpu is the worker thread (and any helper it started) from /proc, 10 ms ticks; the ' +
        'per call-second figure is (recorded window − unrecorded window) / calls, same calls',
      'gaps are read from each file: the caller channel holds a numbered stream (a tone per ' +
        'frame number mod 16), a silent window or a skipped number is a frame late or missing',
      'sender lateTicks/maxLateMs: ticks of the phones process itself that ran over 10 ms late; ' +
        'a gap within (lateness + 100 ms) of a tick 15 ms or more late is counted as the ' +
        "sender's (largestGapNotFromSenderMs leaves those out)",
    ],
  };
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  for (const name of [`recording-${stamp}.json`, 'recording-latest.json']) {
    writeFileSync(join(RESULTS_DIR, name), `${JSON.stringify(body, null, 2)}\n`);
  }
  console.log(`written bench/results/recording-${stamp}.json`);
}

await main();
