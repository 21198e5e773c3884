/**
 * The storage primitive both backends implement. Documents are JSON, grouped by kind and by
 * tenant (the main account that owns them, used as the Redis Cluster hash tag, so everything a
 * tenant owns lives in one slot and can be written atomically). Each document is entered in
 * sorted indexes (score = creation time in ms, or any time the kind chooses), so that listing a
 * time window reads only that window. Unique keys (an auth id, an endpoint username, a phone
 * number) are global and claimed before the document is written.
 */
export interface UniqueKey {
  space: string;
  value: string;
}

export interface UniqueOwner {
  tenant: string;
  id: string;
}

/** Where a document sits: its score and the index and unique entries it holds. */
export interface DocumentEntry {
  score: number;
  /** Secondary index names (e.g. `sub:SA...`); the `all` index is always maintained. */
  indexes: string[];
  unique: UniqueKey[];
}

export interface PageQuery {
  /** Index to read; defaults to `all`. */
  index?: string;
  /** Inclusive score bounds. */
  scoreMin?: number;
  scoreMax?: number;
  offset: number;
  /** 0 means every match from offset on. */
  limit: number;
  /** Oldest first; newest first is the default. */
  ascending?: boolean;
}

export interface Page<T> {
  items: T[];
  total: number;
}

export interface DocumentStore {
  get<T>(kind: string, tenant: string, id: string): Promise<T | null>;
  /**
   * Writes a document. `previous` is the entry it had (on update): indexes and unique keys it no
   * longer holds are released. Throws UniqueViolation, having changed nothing, when a unique key
   * belongs to another document.
   */
  put(
    kind: string,
    tenant: string,
    id: string,
    doc: unknown,
    entry: DocumentEntry,
    previous?: DocumentEntry,
  ): Promise<void>;
  remove(kind: string, tenant: string, id: string, entry: DocumentEntry): Promise<void>;
  /**
   * Compare-and-set, for a document that several writers change by reading it, changing it and
   * writing it back (a registration, which two REGISTERs or two nodes may change at once):
   * writes `next` (null: removes the document) only if the stored document is still `expected`
   * (as read; null: no document), its indexes moving from `previous` to `entry`. False, with
   * nothing written, when another write came in between: read again and retry. For kinds
   * whose documents hold no unique keys.
   */
  swap(kind: string, tenant: string, id: string, change: Swap): Promise<boolean>;
  page<T>(kind: string, tenant: string, query: PageQuery): Promise<Page<T>>;
  findUnique(key: UniqueKey): Promise<UniqueOwner | null>;
  /**
   * Resolves once every write made so far would survive a restart of this process (the
   * embedded store writes its pending log lines now instead of a moment later; Redis has
   * acknowledged every write already).
   */
  durable(): Promise<void>;
  close(): Promise<void>;
}

/** A compare-and-set of one document (DocumentStore.swap). */
export interface Swap {
  /** The document as it was read, which must still be stored; null: none must be. */
  expected: unknown;
  /** What to store; null removes the document. */
  next: unknown;
  /** The entry `next` takes (ignored when it is null). */
  entry: DocumentEntry;
  /** The entry of `expected`, when there is one. */
  previous?: DocumentEntry;
}

export const ALL_INDEX = 'all';

export function uniqueId(key: UniqueKey): string {
  return `${key.space}:${key.value}`;
}

/**
 * What a write changes against `previous` (the entry of the document it replaces): unique keys
 * claimed and released, indexes to write (all of them for a new document or a new score, else
 * only those `previous` did not hold) and indexes to leave.
 */
export function entryChanges(next: DocumentEntry, previous?: DocumentEntry) {
  const prevUnique = new Set((previous?.unique ?? []).map(uniqueId));
  const nextUnique = new Set(next.unique.map(uniqueId));
  const prevIndexes = new Set(previous?.indexes ?? []);
  const nextIndexes = new Set(next.indexes);
  const all = [ALL_INDEX, ...next.indexes];
  return {
    claimed: next.unique.filter((u) => !prevUnique.has(uniqueId(u))),
    released: (previous?.unique ?? []).filter((u) => !nextUnique.has(uniqueId(u))),
    writtenIndexes:
      previous === undefined || previous.score !== next.score
        ? all
        : all.filter((i) => i !== ALL_INDEX && !prevIndexes.has(i)),
    droppedIndexes: [...prevIndexes].filter((i) => !nextIndexes.has(i)),
  };
}

/**
 * The index entries a swap writes and drops: those of entryChanges, or all of `previous`'s
 * when the document goes. A swap moves no unique keys.
 */
export function swapIndexes(change: Swap): { written: string[]; dropped: string[] } {
  if (change.entry.unique.length > 0 || (change.previous?.unique.length ?? 0) > 0) {
    throw new Error('a compare-and-set moves no unique keys');
  }
  if (change.next === null) {
    return { written: [], dropped: [ALL_INDEX, ...(change.previous?.indexes ?? [])] };
  }
  const { writtenIndexes, droppedIndexes } = entryChanges(change.entry, change.previous);
  return { written: writtenIndexes, dropped: droppedIndexes };
}
