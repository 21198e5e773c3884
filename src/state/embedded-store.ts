import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { UniqueViolation } from '../core/errors.js';
import {
  ALL_INDEX,
  entryChanges,
  uniqueId,
  swapIndexes,
  type DocumentEntry,
  type DocumentStore,
  type Page,
  type PageQuery,
  type Swap,
  type UniqueKey,
  type UniqueOwner,
} from './document-store.js';
import { SortedIndex } from './sorted-index.js';
import { StateLog, type StateLogOptions } from './state-log.js';

/** What earlier versions kept: the whole state in one file, rewritten after each change. */
interface Snapshot {
  docs: [string, string][];
  unique: [string, UniqueOwner][];
  indexes: [string, [string, number][]][];
}

/**
 * The in-process store used when no Redis is configured. Documents are kept as JSON text, as
 * Redis keeps them, so a caller can never change a stored document by mutating an object. With
 * a data directory it appends each change to a log (`state.log`) and replays it at start, so a
 * single node keeps its accounts, directory and call records across restarts, and a change costs
 * its own bytes on disk, not the size of everything stored.
 */
export class EmbeddedStore implements DocumentStore {
  private readonly docs = new Map<string, string>();
  private readonly unique = new Map<string, UniqueOwner>();
  private readonly indexes = new Map<string, SortedIndex>();
  private readonly log: StateLog | null = null;

  constructor(dataDir: string | null = null, options: StateLogOptions = {}) {
    if (!dataDir) return;
    mkdirSync(dataDir, { recursive: true });
    const file = join(dataDir, 'state.log');
    const legacy = join(dataDir, 'state.json');
    const migrating = existsSync(legacy) && !existsSync(file);
    if (migrating) this.loadSnapshot(legacy);
    this.log = new StateLog(
      file,
      (change) => this.replay(change),
      () => this.lines(),
      options,
    );
    if (migrating) this.log.appendNow([...this.lines()].join(''));
    rmSync(legacy, { force: true });
  }

  async get<T>(kind: string, tenant: string, id: string): Promise<T | null> {
    const text = this.docs.get(docKey(kind, tenant, id));
    return text === undefined ? null : (JSON.parse(text) as T);
  }

  async put(
    kind: string,
    tenant: string,
    id: string,
    doc: unknown,
    entry: DocumentEntry,
    previous?: DocumentEntry,
  ): Promise<void> {
    const owner = { tenant, id };
    const { claimed, released, writtenIndexes, droppedIndexes } = entryChanges(entry, previous);
    for (const key of claimed) {
      // A key this document did not hold before is taken if anyone holds it, this very id
      // included: creating a document whose id already exists is a clash, not an overwrite.
      if (this.unique.has(uniqueId(key))) throw new UniqueViolation(key.space, key.value);
    }
    const text = JSON.stringify(doc);
    const key = docKey(kind, tenant, id);
    for (const unique of claimed) this.unique.set(uniqueId(unique), owner);
    for (const unique of released) this.unique.delete(uniqueId(unique));
    this.docs.set(key, text);
    for (const index of writtenIndexes) this.index(kind, tenant, index).set(id, entry.score);
    for (const index of droppedIndexes) this.index(kind, tenant, index).delete(id);
    if (!this.log) return;
    let lines = docLine(key, text);
    for (const unique of claimed) lines += uniqueLine(uniqueId(unique), owner);
    for (const unique of released) lines += line(['U', uniqueId(unique)]);
    for (const index of writtenIndexes) {
      lines += line(['i', indexKey(kind, tenant, index), id, entry.score]);
    }
    for (const index of droppedIndexes) lines += line(['I', indexKey(kind, tenant, index), id]);
    this.log.append(lines);
  }

  async swap(kind: string, tenant: string, id: string, change: Swap): Promise<boolean> {
    swapIndexes(change);
    const stored = this.docs.get(docKey(kind, tenant, id)) ?? null;
    const expected = change.expected === null ? null : JSON.stringify(change.expected);
    if (stored !== expected) return false;
    // One turn of the event loop from the check to the write: nothing comes in between.
    if (change.next === null) void this.remove(kind, tenant, id, change.previous ?? change.entry);
    else void this.put(kind, tenant, id, change.next, change.entry, change.previous);
    return true;
  }

  async remove(kind: string, tenant: string, id: string, entry: DocumentEntry): Promise<void> {
    const key = docKey(kind, tenant, id);
    this.docs.delete(key);
    for (const index of [ALL_INDEX, ...entry.indexes]) this.index(kind, tenant, index).delete(id);
    const released: string[] = [];
    for (const unique of entry.unique) {
      const held = uniqueId(unique);
      const holder = this.unique.get(held);
      if (holder?.tenant !== tenant || holder.id !== id) continue;
      this.unique.delete(held);
      released.push(held);
    }
    if (!this.log) return;
    let lines = line(['D', key]);
    for (const index of [ALL_INDEX, ...entry.indexes]) {
      lines += line(['I', indexKey(kind, tenant, index), id]);
    }
    for (const held of released) lines += line(['U', held]);
    this.log.append(lines);
  }

  async page<T>(kind: string, tenant: string, query: PageQuery): Promise<Page<T>> {
    const index = this.indexes.get(indexKey(kind, tenant, query.index ?? ALL_INDEX));
    if (!index) return { items: [], total: 0 };
    const { ids, total } = index.range(query);
    const items: T[] = [];
    for (const id of ids) {
      const text = this.docs.get(docKey(kind, tenant, id));
      if (text !== undefined) items.push(JSON.parse(text) as T);
    }
    return { items, total };
  }

  async findUnique(key: UniqueKey): Promise<UniqueOwner | null> {
    return this.unique.get(uniqueId(key)) ?? null;
  }

  async durable(): Promise<void> {
    await this.log?.commit();
  }

  async close(): Promise<void> {
    await this.log?.close();
  }

  /** Rewrites the log as the current state now, leaving out every replaced value. */
  async compact(): Promise<void> {
    await this.log?.compact();
  }

  /** Waits for the log's pending writes and any rewrite under way. For tests. */
  async settled(): Promise<void> {
    await this.log?.settled();
  }

  private index(kind: string, tenant: string, name: string): SortedIndex {
    return this.indexAt(indexKey(kind, tenant, name));
  }

  /** The whole state as log lines. Safe to read across turns of the event loop. */
  private *lines(): Generator<string> {
    for (const [key, text] of this.docs) yield docLine(key, text);
    for (const [held, owner] of this.unique) yield uniqueLine(held, owner);
    for (const [key, index] of this.indexes) {
      for (const [id, score] of index.members()) yield line(['i', key, id, score]);
    }
  }

  private replay(change: unknown[]): void {
    const [kind, key, a, b] = change as [string, string, unknown, unknown];
    if (kind === 'd') this.docs.set(key, JSON.stringify(a));
    else if (kind === 'D') this.docs.delete(key);
    else if (kind === 'u') this.unique.set(key, { tenant: a as string, id: b as string });
    else if (kind === 'U') this.unique.delete(key);
    else if (kind === 'i') this.indexAt(key).set(a as string, b as number);
    else if (kind === 'I') this.indexAt(key).delete(a as string);
    else throw new Error(`state log: unknown change ${JSON.stringify(kind)}`);
  }

  private indexAt(key: string): SortedIndex {
    let index = this.indexes.get(key);
    if (!index) {
      index = new SortedIndex();
      this.indexes.set(key, index);
    }
    return index;
  }

  private loadSnapshot(file: string): void {
    const snapshot = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
    for (const [key, value] of snapshot.docs) this.docs.set(key, value);
    for (const [key, owner] of snapshot.unique) this.unique.set(key, owner);
    for (const [key, entries] of snapshot.indexes) {
      const index = this.indexAt(key);
      for (const [id, score] of entries) index.set(id, score);
    }
  }
}

const line = (change: unknown[]) => `${JSON.stringify(change)}\n`;
// The document goes in as the JSON it already is, not as a string holding JSON.
const docLine = (key: string, text: string) => `["d",${JSON.stringify(key)},${text}]\n`;
const uniqueLine = (held: string, owner: UniqueOwner) => line(['u', held, owner.tenant, owner.id]);

const docKey = (kind: string, tenant: string, id: string) => `${tenant}\u0000${kind}\u0000${id}`;
const indexKey = (kind: string, tenant: string, name: string) =>
  `${tenant}\u0000${kind}\u0000${name}`;
