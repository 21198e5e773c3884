import type { DocumentEntry, DocumentStore, Page, PageQuery, UniqueKey } from './document-store.js';

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
}

/**
 * A repository of one kind of resource over a DocumentStore. It derives each document's index
 * and unique entries from the document itself, so that an update moves exactly the entries that
 * changed, on either backend.
 */
export class Collection<T extends Owned> {
  constructor(
    private readonly store: DocumentStore,
    private readonly spec: CollectionSpec<T>,
  ) {}

  get(tenant: string, id: string): Promise<T | null> {
    return this.store.get<T>(this.spec.kind, tenant, id);
  }

  /** Throws UniqueViolation (nothing written) when a unique key is taken. */
  create(doc: T): Promise<void> {
    return this.store.put(this.spec.kind, doc.account, this.spec.id(doc), doc, this.entry(doc));
  }

  update(next: T, previous: T): Promise<void> {
    return this.store.put(
      this.spec.kind,
      next.account,
      this.spec.id(next),
      next,
      this.entry(next),
      this.entry(previous),
    );
  }

  remove(doc: T): Promise<void> {
    return this.store.remove(this.spec.kind, doc.account, this.spec.id(doc), this.entry(doc));
  }

  page(tenant: string, query: PageQuery): Promise<Page<T>> {
    return this.store.page<T>(this.spec.kind, tenant, query);
  }

  /** Every document of the tenant in an index, for filters no index answers. */
  async all(tenant: string, index?: string): Promise<T[]> {
    const { items } = await this.store.page<T>(this.spec.kind, tenant, {
      index,
      offset: 0,
      limit: 0,
    });
    return items;
  }

  async findByUnique(key: UniqueKey): Promise<T | null> {
    const owner = await this.store.findUnique(key);
    return owner ? this.get(owner.tenant, owner.id) : null;
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
