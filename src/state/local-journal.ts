import {
  closeSync,
  fdatasyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';

/** One line of a journal file: a value kept under a key, or the key let go. */
type JournalLine<T> = { key: string; value: T } | { key: string; gone: true };

/**
 * What this node owes the store and could not write to it yet (the store was away): entries by
 * key, in the order they were kept, in memory and, when a file is given, in an append-only file
 * under the data directory, synced to disk before keep() returns. A node that restarts reads the
 * file back and still owes what it held. The file is rewritten with only the live entries when
 * it is opened and each time the journal empties.
 */
export class LocalJournal<T> {
  private readonly entries = new Map<string, T>();
  private fd: number | null = null;

  private constructor(private readonly path: string | null) {}

  /** A journal kept in `path` (its folder is made), or in memory only when null. */
  static open<T>(path: string | null): LocalJournal<T> {
    const journal = new LocalJournal<T>(path);
    if (path) journal.load(path);
    return journal;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): T | undefined {
    return this.entries.get(key);
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The entries, oldest first. */
  list(): [string, T][] {
    return [...this.entries];
  }

  /** Keeps `value` under `key`, on disk before it returns when the journal has a file. */
  keep(key: string, value: T): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    this.append({ key, value });
  }

  /** Lets `key` go: what it stood for reached the store. */
  release(key: string): void {
    if (!this.entries.delete(key)) return;
    if (this.entries.size === 0) this.rewrite();
    else this.append({ key, gone: true });
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private load(path: string): void {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    for (const raw of text.split('\n')) {
      if (!raw) continue;
      let line: JournalLine<T>;
      try {
        line = JSON.parse(raw) as JournalLine<T>;
      } catch {
        continue; // a line cut short by a crash while it was written: it was never kept
      }
      if ('gone' in line) this.entries.delete(line.key);
      else {
        this.entries.delete(line.key);
        this.entries.set(line.key, line.value);
      }
    }
    this.rewrite();
  }

  private append(line: JournalLine<T>): void {
    if (!this.path) return;
    this.fd ??= openSync(this.path, 'a', 0o600);
    writeSync(this.fd, JSON.stringify(line) + '\n');
    fdatasyncSync(this.fd);
  }

  private rewrite(): void {
    if (!this.path) return;
    this.close();
    const next = `${this.path}.next`;
    const fd = openSync(next, 'w', 0o600);
    for (const [key, value] of this.entries) writeSync(fd, JSON.stringify({ key, value }) + '\n');
    fdatasyncSync(fd);
    closeSync(fd);
    renameSync(next, this.path);
  }
}
