import {
  closeSync,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  write,
  writeSync,
} from 'node:fs';

const FLUSH_DELAY_MS = 200;
/** After a failed write the next try waits twice as long as the last, up to this. */
const MAX_RETRY_DELAY_MS = 30_000;
const READ_CHUNK_BYTES = 1 << 20;
/** How much of a rewrite is built between two turns of the event loop. */
const REWRITE_SLICE_BYTES = 256 << 10;
const NEWLINE = 0x0a;

export interface StateLogOptions {
  /**
   * Rewrite the log as a copy of the current state once it has grown past this many bytes and
   * past twice its size after the previous rewrite, so its length follows the state, not its
   * history. Default 16 MB.
   */
  rewriteAfterBytes?: number;
  /**
   * A write that failed; its lines are kept and tried again with the next ones, after 0.4 s,
   * then twice as long each time up to 30 s.
   */
  onError?: (error: Error) => void;
}

/**
 * An append-only log of state changes, one JSON array per line. A change costs the bytes of that
 * change, written off the event loop a moment later, whatever the size of the state; the whole
 * state is written only when the log is rewritten, a slice at a time, and changes made meanwhile
 * are carried over. A line cut short by a crash is dropped at the next start.
 */
export class StateLog {
  private fd: number;
  private bytes: number;
  private baseBytes: number;
  private pending: string[] = [];
  /** Lines appended since a rewrite started, to follow the copy of the state in the new file. */
  private carried: string[] | null = null;
  private timer: NodeJS.Timeout | null = null;
  private delayMs = FLUSH_DELAY_MS;
  private writing: Promise<void> | null = null;
  private rewriting: Promise<void> | null = null;
  private closing = false;
  private readonly rewriteAfterBytes: number;
  private readonly onError: (error: Error) => void;

  /**
   * Opens `file`, handing each line already in it to `replay` in order, and keeps it open for
   * appending. `snapshot` yields the current state as lines, for rewrites.
   */
  constructor(
    private readonly file: string,
    replay: (change: unknown[]) => void,
    private readonly snapshot: () => Iterable<string>,
    options: StateLogOptions = {},
  ) {
    this.rewriteAfterBytes = options.rewriteAfterBytes ?? 16 << 20;
    this.onError =
      options.onError ?? ((error) => process.emitWarning(`state log ${file}: ${error.message}`));
    this.bytes = readLog(file, replay);
    this.baseBytes = this.bytes;
    this.fd = openSync(file, 'a', 0o600);
  }

  /** Queues `lines` (each ending in a newline) for the next write. */
  append(lines: string): void {
    this.pending.push(lines);
    this.carried?.push(lines);
    if (!this.writing) this.schedule();
  }

  /** Writes `lines` before returning: for state that must be on disk before anything else. */
  appendNow(lines: string): void {
    const data = Buffer.from(lines);
    writeSync(this.fd, data);
    fdatasyncSync(this.fd);
    this.bytes += data.length;
  }

  /**
   * Writes what is pending now rather than after the flush delay, and resolves when it is
   * written; changes that arrive meanwhile share the write (one write for many callers).
   */
  async commit(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await this.flush();
  }

  /**
   * Rewrites the log now as a copy of the current state, whatever its size, so values since
   * replaced leave the file (secrets an older version wrote in clear). A failure goes to
   * onError and leaves the log as it was.
   */
  async compact(): Promise<void> {
    await this.flush();
    while (this.rewriting) await this.rewriting;
    if (this.closing) return;
    this.rewriting = this.rewrite().finally(() => {
      this.rewriting = null;
    });
    await this.rewriting;
  }

  /** Waits for a rewrite under way to finish or give up. For tests. */
  async settled(): Promise<void> {
    await this.flush();
    await this.rewriting;
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.rewriting;
    await this.flush();
    closeSync(this.fd);
  }

  private async flush(): Promise<void> {
    this.timer = null;
    while (this.writing) await this.writing;
    if (this.pending.length === 0) return;
    this.writing = this.drain();
    await this.writing;
    this.writing = null;
    if (this.pending.length > 0) this.schedule();
    this.maybeRewrite();
  }

  private schedule(): void {
    if (this.timer || this.closing) return;
    this.timer = setTimeout(() => void this.flush(), this.delayMs);
    this.timer.unref();
  }

  private async drain(): Promise<void> {
    const data = Buffer.from(this.pending.join(''));
    this.pending = [];
    try {
      await writeAll(this.fd, data);
      this.bytes += data.length;
      this.delayMs = FLUSH_DELAY_MS;
    } catch (error) {
      this.pending.unshift(data.toString());
      this.delayMs = Math.min(this.delayMs * 2, MAX_RETRY_DELAY_MS);
      this.onError(error as Error);
    }
  }

  private maybeRewrite(): void {
    if (this.rewriting || this.closing) return;
    if (this.bytes <= this.rewriteAfterBytes || this.bytes <= 2 * this.baseBytes) return;
    this.rewriting = this.rewrite().finally(() => {
      this.rewriting = null;
    });
  }

  private async rewrite(): Promise<void> {
    const temp = `${this.file}.tmp`;
    const fd = openSync(temp, 'w', 0o600);
    this.carried = [];
    let written = 0;
    try {
      let slice: string[] = [];
      let sliceBytes = 0;
      for (const line of this.snapshot()) {
        slice.push(line);
        sliceBytes += line.length;
        if (sliceBytes < REWRITE_SLICE_BYTES) continue;
        written += await writeAll(fd, Buffer.from(slice.join('')));
        slice = [];
        sliceBytes = 0;
        if (this.closing) throw new RewriteAbandoned();
      }
      written += await writeAll(fd, Buffer.from(slice.join('')));
      await new Promise<void>((resolve, reject) =>
        fdatasync(fd, (error) => (error ? reject(error) : resolve())),
      );
      // Changes made while the copy was written follow it. The switch happens with no write to
      // the old file under way and nothing left to carry, so no change is lost or written twice.
      for (;;) {
        if (this.closing) throw new RewriteAbandoned();
        if (this.writing) await this.writing;
        else if (this.carried.length > 0) {
          const lines = this.carried.join('');
          this.carried = [];
          written += await writeAll(fd, Buffer.from(lines));
        } else break;
      }
      renameSync(temp, this.file);
      closeSync(this.fd);
      this.fd = fd;
      this.pending = [];
      this.bytes = written;
      this.baseBytes = written;
    } catch (error) {
      closeSync(fd);
      rmSync(temp, { force: true });
      if (!(error instanceof RewriteAbandoned)) this.onError(error as Error);
    } finally {
      this.carried = null;
    }
  }
}

class RewriteAbandoned extends Error {}

function writeAll(fd: number, data: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const from = (offset: number) =>
      write(fd, data, offset, data.length - offset, null, (error, count) => {
        if (error) reject(error);
        else if (offset + count < data.length) from(offset + count);
        else resolve(data.length);
      });
    from(0);
  });
}

/**
 * Replays every whole line of `file` and returns the length they take. A last line without its
 * newline is what a crash mid-write leaves: it is cut off so the next append starts clean. A
 * damaged line anywhere else is an error, not something to skip.
 */
function readLog(file: string, replay: (change: unknown[]) => void): number {
  let fd: number;
  try {
    fd = openSync(file, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    const chunk = Buffer.alloc(READ_CHUNK_BYTES);
    let rest = Buffer.alloc(0);
    let position = 0;
    let whole = 0;
    let lineNumber = 0;
    while (position < size) {
      const count = readSync(fd, chunk, 0, chunk.length, position);
      if (count === 0) break;
      position += count;
      const data = rest.length > 0 ? Buffer.concat([rest, chunk.subarray(0, count)]) : chunk;
      const end = rest.length > 0 ? data.length : count;
      let start = 0;
      for (let nl = data.indexOf(NEWLINE, start); nl !== -1 && nl < end;) {
        lineNumber += 1;
        replay(parseLine(data.toString('utf8', start, nl), file, lineNumber));
        whole += nl + 1 - start;
        start = nl + 1;
        nl = data.indexOf(NEWLINE, start);
      }
      rest = Buffer.from(data.subarray(start, end));
    }
    if (whole < size) ftruncateSync(fd, whole);
    return whole;
  } finally {
    closeSync(fd);
  }
}

function parseLine(text: string, file: string, lineNumber: number): unknown[] {
  try {
    const change = JSON.parse(text) as unknown;
    if (Array.isArray(change)) return change;
  } catch {
    // Reported below with where it is.
  }
  throw new Error(`state log ${file} is damaged at line ${lineNumber}`);
}
