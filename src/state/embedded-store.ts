import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UniqueViolation } from '../core/errors.js';
import {
  ALL_INDEX,
  entryChanges,
  uniqueId,
  type DocumentEntry,
  type DocumentStore,
  type Page,
  type PageQuery,
  type UniqueKey,
  type UniqueOwner,
} from './document-store.js';
import { SortedIndex } from './sorted-index.js';

interface Snapshot {
  docs: [string, string][];
  unique: [string, UniqueOwner][];
  indexes: [string, [string, number][]][];
}

/**
 * The in-process store used when no Redis is configured. Documents are kept as JSON text, as
 * Redis keeps them, so a caller can never change a stored document by mutating an object. With
 * a data directory it writes a snapshot shortly after each change and on close, and loads it at
 * start, so a single node keeps its accounts and directory across restarts.
 */
export class EmbeddedStore implements DocumentStore {
  private readonly docs = new Map<string, string>();
  private readonly unique = new Map<string, UniqueOwner>();
  private readonly indexes = new Map<string, SortedIndex>();
  private readonly file: string | null;
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(dataDir: string | null = null) {
    this.file = dataDir ? join(dataDir, 'state.json') : null;
    if (dataDir) {
      mkdirSync(dataDir, { recursive: true });
      this.load();
    }
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
    const { claimed, released, droppedIndexes } = entryChanges(entry, previous);
    for (const key of claimed) {
      // A key this document did not hold before is taken if anyone holds it, this very id
      // included: creating a document whose id already exists is a clash, not an overwrite.
      if (this.unique.has(uniqueId(key))) throw new UniqueViolation(key.space, key.value);
    }
    for (const key of claimed) this.unique.set(uniqueId(key), owner);
    for (const key of released) this.unique.delete(uniqueId(key));
    this.docs.set(docKey(kind, tenant, id), JSON.stringify(doc));
    for (const index of [ALL_INDEX, ...entry.indexes]) {
      this.index(kind, tenant, index).set(id, entry.score);
    }
    for (const index of droppedIndexes) this.index(kind, tenant, index).delete(id);
    this.changed();
  }

  async remove(kind: string, tenant: string, id: string, entry: DocumentEntry): Promise<void> {
    this.docs.delete(docKey(kind, tenant, id));
    for (const index of [ALL_INDEX, ...entry.indexes]) this.index(kind, tenant, index).delete(id);
    for (const key of entry.unique) {
      const holder = this.unique.get(uniqueId(key));
      if (holder?.tenant === tenant && holder.id === id) this.unique.delete(uniqueId(key));
    }
    this.changed();
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

  async close(): Promise<void> {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
      this.flush();
    }
  }

  private index(kind: string, tenant: string, name: string): SortedIndex {
    const key = indexKey(kind, tenant, name);
    let index = this.indexes.get(key);
    if (!index) {
      index = new SortedIndex();
      this.indexes.set(key, index);
    }
    return index;
  }

  private changed(): void {
    if (!this.file || this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flush();
    }, 200);
  }

  private flush(): void {
    if (!this.file) return;
    const snapshot: Snapshot = {
      docs: [...this.docs],
      unique: [...this.unique],
      indexes: [...this.indexes].map(([key, index]) => [key, index.entries()]),
    };
    // Write then rename, so a crash mid-write leaves the previous snapshot whole.
    const temp = `${this.file}.tmp`;
    writeFileSync(temp, JSON.stringify(snapshot), { mode: 0o600 });
    renameSync(temp, this.file);
  }

  private load(): void {
    if (!this.file) return;
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return;
    }
    const snapshot = JSON.parse(text) as Snapshot;
    for (const [key, value] of snapshot.docs) this.docs.set(key, value);
    for (const [key, owner] of snapshot.unique) this.unique.set(key, owner);
    for (const [key, entries] of snapshot.indexes) {
      const index = new SortedIndex();
      for (const [id, score] of entries) index.set(id, score);
      this.indexes.set(key, index);
    }
  }
}

const docKey = (kind: string, tenant: string, id: string) => `${tenant}\u0000${kind}\u0000${id}`;
const indexKey = (kind: string, tenant: string, name: string) =>
  `${tenant}\u0000${kind}\u0000${name}`;
