import { Redis } from 'ioredis';
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

/**
 * The Redis backend. Key layout (works on Redis Cluster):
 *   vg:{TENANT}:d:KIND:ID      the document, JSON
 *   vg:{TENANT}:i:KIND:INDEX   sorted set of ids by score
 *   vg:u:SPACE:VALUE           the owner of a unique key, JSON {tenant,id}
 * Everything a tenant owns shares the hash tag {TENANT}, so one MULTI writes a document and its
 * indexes atomically. Unique keys are global and each is a single-key SET NX, claimed before
 * the document is written and given back if a later claim fails.
 */
export class RedisStore implements DocumentStore {
  constructor(private readonly redis: Redis) {}

  static connect(url: string): RedisStore {
    return new RedisStore(new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 3 }));
  }

  get client(): Redis {
    return this.redis;
  }

  async get<T>(kind: string, tenant: string, id: string): Promise<T | null> {
    const text = await this.redis.get(docKey(kind, tenant, id));
    return text === null ? null : (JSON.parse(text) as T);
  }

  async put(
    kind: string,
    tenant: string,
    id: string,
    doc: unknown,
    entry: DocumentEntry,
    previous?: DocumentEntry,
  ): Promise<void> {
    const { claimed, released, writtenIndexes, droppedIndexes } = entryChanges(entry, previous);
    const taken: UniqueKey[] = [];
    const owner = JSON.stringify({ tenant, id });
    for (const key of claimed) {
      const ok = await this.redis.set(uniqueKey(key), owner, 'NX');
      if (ok === 'OK') {
        taken.push(key);
        continue;
      }
      // Held by anyone, this very id included (see EmbeddedStore.put): give back what this
      // write claimed and change nothing.
      if (taken.length > 0) await this.redis.del(...taken.map(uniqueKey));
      throw new UniqueViolation(key.space, key.value);
    }
    if (writtenIndexes.length === 0 && droppedIndexes.length === 0) {
      // Only the document changes: one command, atomic on its own.
      await this.redis.set(docKey(kind, tenant, id), JSON.stringify(doc));
    } else {
      const multi = this.redis.multi().set(docKey(kind, tenant, id), JSON.stringify(doc));
      for (const index of writtenIndexes)
        multi.zadd(indexKey(kind, tenant, index), entry.score, id);
      for (const index of droppedIndexes) multi.zrem(indexKey(kind, tenant, index), id);
      await multi.exec();
    }
    if (released.length > 0) await this.releaseUnique(released, tenant, id);
  }

  async remove(kind: string, tenant: string, id: string, entry: DocumentEntry): Promise<void> {
    const multi = this.redis.multi().del(docKey(kind, tenant, id));
    for (const index of [ALL_INDEX, ...entry.indexes])
      multi.zrem(indexKey(kind, tenant, index), id);
    await multi.exec();
    await this.releaseUnique(entry.unique, tenant, id);
  }

  async page<T>(kind: string, tenant: string, query: PageQuery): Promise<Page<T>> {
    const key = indexKey(kind, tenant, query.index ?? ALL_INDEX);
    const min = query.scoreMin === undefined ? '-inf' : String(query.scoreMin);
    const max = query.scoreMax === undefined ? '+inf' : String(query.scoreMax);
    const limitArgs =
      query.limit === 0 ? ['LIMIT', query.offset, -1] : ['LIMIT', query.offset, query.limit];
    const [countResult, idsResult] = (await this.redis
      .pipeline()
      .zcount(key, min, max)
      .call(
        'ZRANGE',
        key,
        query.ascending ? min : max,
        query.ascending ? max : min,
        'BYSCORE',
        ...(query.ascending ? [] : ['REV']),
        ...limitArgs,
      )
      .exec()) as [[Error | null, number], [Error | null, string[]]];
    if (countResult[0]) throw countResult[0];
    if (idsResult[0]) throw idsResult[0];
    const ids = idsResult[1];
    if (ids.length === 0) return { items: [], total: countResult[1] };
    const texts = await this.redis.mget(ids.map((id) => docKey(kind, tenant, id)));
    const items = texts.filter((t): t is string => t !== null).map((t) => JSON.parse(t) as T);
    return { items, total: countResult[1] };
  }

  async findUnique(key: UniqueKey): Promise<UniqueOwner | null> {
    const text = await this.redis.get(uniqueKey(key));
    return text === null ? null : (JSON.parse(text) as UniqueOwner);
  }

  async durable(): Promise<void> {
    // Every write has been acknowledged by Redis when its promise resolved.
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** Deletes unique keys this document still holds (never one another document has claimed). */
  private async releaseUnique(keys: UniqueKey[], tenant: string, id: string): Promise<void> {
    const owner = JSON.stringify({ tenant, id });
    for (const key of keys) {
      await this.redis.eval(RELEASE_IF_OWNER, 1, uniqueKey(key), owner);
    }
  }
}

const RELEASE_IF_OWNER =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

const docKey = (kind: string, tenant: string, id: string) => `vg:{${tenant}}:d:${kind}:${id}`;
const indexKey = (kind: string, tenant: string, name: string) => `vg:{${tenant}}:i:${kind}:${name}`;
const uniqueKey = (key: UniqueKey) => `vg:u:${uniqueId(key)}`;
