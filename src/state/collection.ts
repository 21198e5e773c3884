import type { DocumentEntry, DocumentStore, Page, PageQuery, UniqueKey } from './document-store.js';
import { SecretBox } from './secret-box.js';

/** Every stored resource is owned by a tenant (main account) and maybe one of its subaccounts. */
export interface Owned {
  /** The main account: the tenant, and the Redis hash tag. */
  account: string;
  /** The subaccount it belongs to, or null when it is the main account's own. */
  subaccount: string | null;
  /** Creation time, ms since the epoch; the score of the `all` index. */
  created: number;
}

export interface CollectionSpec<T> {
  kind: string;
  id(doc: T): string;
  /** Secondary indexes besides `all` and `sub:<subaccount>`, e.g. `app:<id>`. */
  indexes?(doc: T): string[];
  unique?(doc: T): UniqueKey[];
  /** Score in every index; creation time unless the kind says otherwise. */
  score?(doc: T): number;
  /**
   * Fields that hold secrets: sealed (encrypted) in the store and opened on read, so the code
   * above a collection sees them in clear and a read of the store alone does not (README,
   * Secrets at rest). Only string fields; a null stays null.
   */
  sealed?: readonly SecretField<T>[];
  /**
   * A sealed field whose keyed digest is also stored, in `into`, to check a presented value
   * against it (auth tokens: every login).
   */
  digest?: { field: SecretField<T>; into: DigestField<T> };
}

/** The fields of T that hold a string (or null). */
export type SecretField<T> = {
  [K in keyof T & string]: T[K] extends string | null ? K : never;
}[keyof T & string];

type DigestField<T> = {
  [K in keyof T & string]: string extends T[K] ? K : never;
}[keyof T & string];

/**
 * A repository of one kind of resource over a DocumentStore. It derives each document's index
 * and unique entries from the document itself, so that an update moves exactly the entries that
 * changed, on either backend.
 */
export class Collection<T extends Owned> {
  constructor(
    private readonly store: DocumentStore,
    private readonly spec: CollectionSpec<T>,
    private readonly secrets: SecretBox = SecretBox.random(),
  ) {}

  async get(tenant: string, id: string): Promise<T | null> {
    const stored = await this.store.get<T>(this.spec.kind, tenant, id);
    return stored && this.open(stored);
  }

  /** Throws UniqueViolation (nothing written) when a unique key is taken. */
  create(doc: T): Promise<void> {
    return this.store.put(
      this.spec.kind,
      doc.account,
      this.spec.id(doc),
      this.seal(doc),
      this.entry(doc),
    );
  }

  update(next: T, previous: T): Promise<void> {
    return this.store.put(
      this.spec.kind,
      next.account,
      this.spec.id(next),
      this.seal(next),
      this.entry(next),
      this.entry(previous),
    );
  }

  /**
   * Rewrites the tenant's documents that still hold a secret in clear (written before secrets
   * were sealed) with it sealed; returns how many it rewrote.
   */
  async sealLegacy(tenant: string): Promise<number> {
    if (!this.spec.sealed?.length) return 0;
    const { items } = await this.store.page<T>(this.spec.kind, tenant, { offset: 0, limit: 0 });
    let rewritten = 0;
    for (const stored of items) {
      if (this.isSealed(stored)) continue;
      const doc = this.open(stored);
      await this.update(doc, doc);
      rewritten += 1;
    }
    return rewritten;
  }

  /**
   * Compare-and-set (DocumentStore.swap): stores `next` (null: removes the document) only if
   * the stored one is still `previous` as this collection returned it (null: none). False,
   * nothing written, when another write came in between. For kinds without unique keys or
   * sealed fields, whose stored form is the document itself.
   */
  swap(previous: T | null, next: T | null): Promise<boolean> {
    if (this.spec.sealed?.length || this.spec.unique) {
      throw new Error(`${this.spec.kind} documents cannot be compared and set`);
    }
    const doc = next ?? previous;
    if (doc === null) return Promise.resolve(previous === null);
    return this.store.swap(this.spec.kind, doc.account, this.spec.id(doc), {
      expected: previous,
      next,
      entry: this.entry(doc),
      ...(previous && { previous: this.entry(previous) }),
    });
  }

  remove(doc: T): Promise<void> {
    return this.store.remove(this.spec.kind, doc.account, this.spec.id(doc), this.entry(doc));
  }

  async page(tenant: string, query: PageQuery): Promise<Page<T>> {
    const page = await this.store.page<T>(this.spec.kind, tenant, query);
    return this.spec.sealed?.length
      ? { items: page.items.map((stored) => this.open(stored)), total: page.total }
      : page;
  }

  /** Every document of the tenant in an index, for filters no index answers. */
  async all(tenant: string, index?: string): Promise<T[]> {
    const { items } = await this.page(tenant, { index, offset: 0, limit: 0 });
    return items;
  }

  async findByUnique(key: UniqueKey): Promise<T | null> {
    const owner = await this.store.findUnique(key);
    return owner ? this.get(owner.tenant, owner.id) : null;
  }

  private seal(doc: T): T {
    const { sealed, digest } = this.spec;
    if (!sealed?.length) return doc;
    const stored: Record<string, unknown> = { ...(doc as object) };
    for (const field of sealed) {
      const value = doc[field] as string | null;
      if (typeof value === 'string')
        stored[field] = this.secrets.seal(value, this.context(doc, field));
    }
    if (digest) stored[digest.into] = this.secrets.digest(doc[digest.field] as string);
    return stored as T;
  }

  private open(stored: T): T {
    const { sealed } = this.spec;
    if (!sealed?.length) return stored;
    const doc: Record<string, unknown> = { ...(stored as object) };
    for (const field of sealed) {
      const value = stored[field] as string | null;
      if (typeof value === 'string')
        doc[field] = this.secrets.open(value, this.context(stored, field));
    }
    return doc as T;
  }

  private isSealed(stored: T): boolean {
    const { sealed = [], digest } = this.spec;
    if (digest && typeof stored[digest.into] !== 'string') return false;
    return sealed.every((field) => {
      const value = stored[field] as string | null;
      return typeof value !== 'string' || SecretBox.isSealed(value);
    });
  }

  /** What a sealed value is bound to: moved to another document or field, it does not open. */
  private context(doc: T, field: string): string {
    return [this.spec.kind, doc.account, this.spec.id(doc), field].join('\u0000');
  }

  private entry(doc: T): DocumentEntry {
    const indexes = this.spec.indexes?.(doc) ?? [];
    if (doc.subaccount) indexes.push(subaccountIndex(doc.subaccount));
    return {
      score: this.spec.score?.(doc) ?? doc.created,
      indexes,
      unique: this.spec.unique?.(doc) ?? [],
    };
  }
}

export const subaccountIndex = (subaccount: string): string => `sub:${subaccount}`;
