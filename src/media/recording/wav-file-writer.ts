import { open, writeFile } from 'node:fs/promises';
import type { RecordingOutcome } from './recording-spec.js';

/** Bytes of the canonical 16-bit PCM WAV header (RIFF, fmt, data). */
export const WAV_HEADER_BYTES = 44;

/** Audio gathered before a write: about a second at 8 kHz mono, so a call writes once a second. */
const CHUNK_BYTES = 16_000;
/**
 * Audio that may wait unwritten (10 s of stereo 16 kHz): a store slower than real time for that
 * long fails the recording rather than the worker's memory.
 */
const MAX_PENDING_BYTES = 640_000;

/**
 * The 44-byte header of a 16-bit PCM WAV file holding `dataBytes` of samples
 * (RIFF/WAVE: "RIFF" size "WAVE", "fmt " 16 PCM channels rate byteRate blockAlign 16, "data" size).
 */
export function wavHeader(rate: number, channels: 1 | 2, dataBytes: number): Buffer {
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/**
 * A WAV file written as audio passes, off the audio path: frames are gathered in memory and
 * written in chunks with asynchronous file calls, never waited for by the caller. Each chunk
 * opens the file afresh, so a file or directory taken away mid-recording (or a full disk)
 * fails the next write rather than writing into a file no one will read. After a failure
 * the writer drops what comes and `failure` says why; the caller goes on.
 */
export class WavFileWriter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of samples written or under way. */
  private dataBytes = 0;
  private writing: Promise<void> = Promise.resolve();
  private busy = false;
  private error: Error | null = null;
  private finished = false;

  private constructor(
    readonly path: string,
    readonly rate: number,
    readonly channels: 1 | 2,
  ) {}

  /** Creates the file with a header for no samples; throws when it cannot be made. */
  static async create(path: string, rate: number, channels: 1 | 2): Promise<WavFileWriter> {
    await writeFile(path, wavHeader(rate, channels, 0), { flag: 'wx' });
    return new WavFileWriter(path, rate, channels);
  }

  /** Why writing stopped, null while it goes well. */
  get failure(): Error | null {
    return this.error;
  }

  /** Bytes of samples taken so far (written or waiting). */
  get bytes(): number {
    return this.dataBytes + this.pendingBytes;
  }

  /** Takes interleaved 16-bit samples; copied, so the caller may reuse its buffer. */
  append(samples: Int16Array): void {
    if (this.error || this.finished) return;
    const bytes = Buffer.alloc(samples.length * 2);
    for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(samples[i]!, i * 2);
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    if (this.pendingBytes > MAX_PENDING_BYTES) {
      this.fail(new Error('the store fell more than 10 s behind the audio'));
      return;
    }
    if (this.pendingBytes >= CHUNK_BYTES && !this.busy) this.flush();
  }

  /**
   * Writes what waits and the final header; resolves with the failure, null when the file
   * is whole.
   */
  async finish(): Promise<Error | null> {
    if (!this.finished) {
      this.finished = true;
      this.flush();
      this.writing = this.writing.then(() => this.writeAt(0, this.header()));
    }
    await this.writing;
    return this.error;
  }

  private header(): Buffer {
    return wavHeader(this.rate, this.channels, this.dataBytes);
  }

  private flush(): void {
    if (this.error || this.pendingBytes === 0) return;
    const chunk = Buffer.concat(this.pending, this.pendingBytes);
    const at = WAV_HEADER_BYTES + this.dataBytes;
    this.pending = [];
    this.dataBytes += this.pendingBytes;
    this.pendingBytes = 0;
    this.busy = true;
    this.writing = this.writing
      .then(() => this.writeAt(at, chunk))
      .then(() => {
        this.busy = false;
        if (!this.finished && this.pendingBytes >= CHUNK_BYTES) this.flush();
      });
  }

  /** Writes `bytes` at `position` of the file, opened for this write alone. */
  private async writeAt(position: number, bytes: Buffer): Promise<void> {
    if (this.error) return;
    try {
      const handle = await open(this.path, 'r+');
      try {
        let done = 0;
        while (done < bytes.length) {
          const { bytesWritten } = await handle.write(
            bytes,
            done,
            bytes.length - done,
            position + done,
          );
          done += bytesWritten;
        }
      } finally {
        await handle.close();
      }
    } catch (error) {
      this.fail(error as Error);
    }
  }

  private fail(error: Error): void {
    this.error ??= error;
    this.pending = [];
    this.pendingBytes = 0;
  }
}

/**
 * How a recording ended once its writer has finished: `frames` of 20 ms written from
 * `startedAt` (epoch ms), stopped for `reason`, or failed when the writer reports `failure`.
 */
export function recordingOutcome(
  recordingId: string,
  writer: WavFileWriter,
  written: { frames: number; startedAt: number },
  reason: RecordingOutcome['reason'],
  failure: Error | null,
): RecordingOutcome {
  const durationMs = written.frames * 20;
  return {
    recordingId,
    state: failure ? 'failed' : 'completed',
    reason: failure ? 'failed' : reason,
    durationMs,
    startedAt: written.startedAt,
    endedAt: written.startedAt + durationMs,
    rate: writer.rate,
    channels: writer.channels,
    bytes: writer.bytes,
    ...(failure && { message: `the recording could not be written: ${failure.message}` }),
  };
}
