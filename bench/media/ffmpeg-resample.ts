import { spawn } from 'node:child_process';
import { once } from 'node:events';

/** One ffmpeg process resampling a long stream fed to it 20 ms at a time. */
export interface FfmpegResampleRun {
  fromRate: number;
  toRate: number;
  frames: number;
  /** From spawn to exit, including start-up and Node's own writing and reading of the pipes. */
  wallMs: number;
  /** wallMs over frames: the per-frame throughput cost of a long-running ffmpeg. */
  usPerFrame: number;
  /** Wall time of the same command with empty input: start-up and shut-down alone. */
  emptyRunMs: number;
  /** ffmpeg's own -benchmark figures for its transcoding loop (user + system CPU, and real). */
  ffmpegCpuUsPerFrame: number | null;
  ffmpegRealMs: number | null;
  outputSamples: number;
}

/**
 * Spawns `ffmpeg -f s16le -ar <from> -ac 1 -i pipe:0 -f s16le -ar <to> -ac 1 pipe:1`, writes
 * `frames` frames of 20 ms one write at a time (waiting for 'drain' when the pipe is full),
 * reads everything it outputs, and divides the wall time by the frames.
 */
export async function runFfmpegResample(
  input: readonly Int16Array[],
  fromRate: number,
  toRate: number,
  frames: number,
): Promise<FfmpegResampleRun> {
  const empty = await pipeThrough([], fromRate, toRate, 0);
  const full = await pipeThrough(input, fromRate, toRate, frames);
  return {
    fromRate,
    toRate,
    frames,
    wallMs: round(full.wallNs / 1e6),
    usPerFrame: round(full.wallNs / 1e3 / frames),
    emptyRunMs: round(empty.wallNs / 1e6),
    ffmpegCpuUsPerFrame: full.cpuSeconds === null ? null : round((full.cpuSeconds * 1e6) / frames),
    ffmpegRealMs: full.realSeconds === null ? null : round(full.realSeconds * 1e3),
    outputSamples: full.outputBytes / 2,
  };
}

interface PipeRun {
  wallNs: number;
  outputBytes: number;
  cpuSeconds: number | null;
  realSeconds: number | null;
}

async function pipeThrough(
  input: readonly Int16Array[],
  fromRate: number,
  toRate: number,
  frames: number,
): Promise<PipeRun> {
  const format = (rate: number) => ['-f', 's16le', '-ar', String(rate), '-ac', '1'];
  const args = ['-hide_banner', '-nostats', '-benchmark', ...format(fromRate), '-i', 'pipe:0'];
  const buffers = input.map((f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength));
  const start = process.hrtime.bigint();
  const child = spawn('ffmpeg', [...args, ...format(toRate), 'pipe:1'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let outputBytes = 0;
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (outputBytes += chunk.length));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'close');
  for (let i = 0; i < frames; i++) {
    if (!child.stdin.write(buffers[i % buffers.length]!)) await once(child.stdin, 'drain');
  }
  child.stdin.end();
  const [code] = (await exited) as [number | null];
  const wallNs = Number(process.hrtime.bigint() - start);
  if (code !== 0) throw new Error(`ffmpeg exited with ${code}: ${stderr.slice(-500)}`);
  const bench = /bench: utime=([\d.]+)s stime=([\d.]+)s rtime=([\d.]+)s/.exec(stderr);
  return {
    wallNs,
    outputBytes,
    cpuSeconds: bench ? Number(bench[1]) + Number(bench[2]) : null,
    realSeconds: bench ? Number(bench[3]) : null,
  };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
