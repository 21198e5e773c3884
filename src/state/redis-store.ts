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
import { DEFAULT_REDIS_TIMEOUT_MS, openRedis, type RedisClient } from './redis-connection.js';
import { parseRedisTarget, type RedisTarget } from './redis-target.js';
import { ReplicaWait } from './replica-wait.js';
import { STORE_CALL_MS, withinStoreDeadline } from './store-deadline.js';

export interface RedisStoreOptions {
  /** Upper bound on one store operation, all its commands included (ms). */
  timeoutMs?: number;
  /**
   * Acknowledges a write only once the replicas connected to its master have it (WAIT), so a
   * failover loses nothing a client was told was stored.
   */
  waitForReplicas?: boolean;
  /** Connection errors; a repeated one is reported once until Redis is back. */
  onError?: (error: Error) => void;
}

/**
 * The Redis backend. Key layout (works on Redis Cluster):
 *   vg:{TENANT}:d:KIND:ID      the document, JSON
 *   vg:{TENANT}:i:KIND:INDEX   sorted set of ids by score
 *   vg:u:SPACE:VALUE           the owner of a unique key, JSON {tenant,id}
 * Everything a tenant owns shares the hash tag {TENANT}, so one MULTI writes a document and its
 * indexes atomically, and MGET reads a page in one slot. Unique keys are global and each is a
 * single-key command (SET NX, a one-key script, one DEL per key: keys in different slots never
 * share a command), claimed before the document is written and given back if a later claim
 * fails.
 *
 * Every operation fails with StoreUnavailable, within `timeoutMs`, while Redis cannot be
 * reached (restart, failover), so that a REST request answers 503 instead of hanging.
 */
export class RedisStore implements DocumentStore {
  private readonly timeoutMs: number;
  private readonly replicas: ReplicaWait | null;
  private lastError: string | undefined;

  constructor(
    private readonly redis: RedisClient,
    options: RedisStoreOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? STORE_CALL_MS;
    this.replicas = options.waitForReplicas ? new ReplicaWait(redis) : null;
    // The store's scripts go as EVALSHA, loaded by EVAL on a connection that has not seen them
    // (after a restart or a failover too).
    redis.defineCommand('voxgateIndexedWrite', { lua: INDEXED_WRITE });
    redis.defineCommand('voxgateReleaseIfOwner', { numberOfKeys: 1, lua: RELEASE_IF_OWNER });
    const onError = options.onError;
    if (onError) {
      redis.on('error', (error: Error) => {
        if (error.message === this.lastError) return;
        this.lastError = error.message;
        onError(error);
      });
      redis.on('ready', () => (this.lastError = undefined));
    }
  }

  /** Connects to a VOXGATE_REDIS_URL (one server, `redis+cluster://`, `redis+sentinel://`). */
  static connect(url: string | RedisTarget, options: RedisStoreOptions = {}): RedisStore {
    const target = typeof url === 'string' ? parseRedisTarget(url) : url;
    return new RedisStore(
      openRedis(target, { purpose: 'store', timeoutMs: DEFAULT_REDIS_TIMEOUT_MS }),
      options,
    );
  }

  private get scripts(): StoreScripts {
    return this.redis as unknown as StoreScripts;
  }

  get client(): RedisClient {
    return this.redis;
  }

  get<T>(kind: string, tenant: string, id: string): Promise<T | null> {
    return this.guard(async () => {
      const text = await this.redis.get(docKey(kind, tenant, id));
      return text === null ? null : (JSON.parse(text) as T);
    });
  }

  async put(
    kind: string,
    tenant: string,
    id: string,
    doc: unknown,
    entry: DocumentEntry,
    previous?: DocumentEntry,
  ): Promise<void> {
    return this.guard(() => this.write(kind, tenant, id, doc, entry, previous));
  }

  private async write(
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
      for (const given of taken) await this.redis.del(uniqueKey(given));
      throw new UniqueViolation(key.space, key.value);
    }
    if (writtenIndexes.length === 0 && droppedIndexes.length === 0) {
      // Only the document changes: one command, atomic on its own.
      await this.redis.set(docKey(kind, tenant, id), JSON.stringify(doc));
    } else {
      await this.writeIndexed(
        docKey(kind, tenant, id),
        JSON.stringify(doc),
        id,
        entry.score,
        writtenIndexes.map((index) => indexKey(kind, tenant, index)),
        droppedIndexes.map((index) => indexKey(kind, tenant, index)),
      );
    }
    if (released.length > 0) await this.releaseUnique(released, tenant, id);
    await this.replicas?.after([
      docKey(kind, tenant, id),
      ...[...claimed, ...released].map(uniqueKey),
    ]);
  }

  remove(kind: string, tenant: string, id: string, entry: DocumentEntry): Promise<void> {
    return this.guard(async () => {
      await this.writeIndexed(
        docKey(kind, tenant, id),
        null,
        id,
        0,
        [],
        [ALL_INDEX, ...entry.indexes].map((index) => indexKey(kind, tenant, index)),
      );
      await this.releaseUnique(entry.unique, tenant, id);
      await this.replicas?.after([docKey(kind, tenant, id), ...entry.unique.map(uniqueKey)]);
    });
  }

  swap(kind: string, tenant: string, id: string, change: Swap): Promise<boolean> {
    let indexes: ReturnType<typeof swapIndexes>;
    try {
      indexes = swapIndexes(change);
    } catch (error) {
      // A caller's mistake, not the store's: it must not read as Redis being away.
      return Promise.reject(error as Error);
    }
    const { written, dropped } = indexes;
    return this.guard(async () => {
      const doc = docKey(kind, tenant, id);
      const keys = [doc, ...[...written, ...dropped].map((index) => indexKey(kind, tenant, index))];
      const swapped = await this.scripts.voxgateIndexedWrite(
        keys.length,
        ...keys,
        change.next === null ? '' : JSON.stringify(change.next),
        String(change.entry.score),
        id,
        String(written.length),
        change.expected === null ? 'absent' : 'equals',
        change.expected === null ? '' : JSON.stringify(change.expected),
      );
      if (swapped !== 1) return false;
      await this.replicas?.after([doc]);
      return true;
    });
  }

  page<T>(kind: string, tenant: string, query: PageQuery): Promise<Page<T>> {
    return this.guard(() => this.readPage<T>(kind, tenant, query));
  }

  private async readPage<T>(kind: string, tenant: string, query: PageQuery): Promise<Page<T>> {
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

  findUnique(key: UniqueKey): Promise<UniqueOwner | null> {
    return this.guard(async () => {
      const text = await this.redis.get(uniqueKey(key));
      return text === null ? null : (JSON.parse(text) as UniqueOwner);
    });
  }

  async durable(): Promise<void> {
    // Every write has been acknowledged by Redis (and by its replicas, when waited for) when
    // its promise resolved; surviving a Redis restart is Redis's persistence (README, Redis).
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /**
   * Sets (or, with null, deletes) a document and adds it to and removes it from indexes, all at
   * once: one script, which the connection's automatic pipeline sends with the other commands
   * of the moment (a MULTI/EXEC is a write of its own: five a message were a tenth of the
   * main thread). Every key shares the tenant's hash tag, so this works on a Cluster.
   */
  private async writeIndexed(
    doc: string,
    text: string | null,
    id: string,
    score: number,
    added: string[],
    dropped: string[],
  ): Promise<void> {
    const keys = [doc, ...added, ...dropped];
    await this.scripts.voxgateIndexedWrite(
      keys.length,
      ...keys,
      text ?? '',
      String(score),
      id,
      String(added.length),
    );
  }

  /** Deletes unique keys this document still holds (never one another document has claimed). */
  private async releaseUnique(keys: UniqueKey[], tenant: string, id: string): Promise<void> {
    const owner = JSON.stringify({ tenant, id });
    for (const key of keys) {
      await this.scripts.voxgateReleaseIfOwner(uniqueKey(key), owner);
    }
  }

  /** Runs one operation, turning an unreachable or silent Redis into StoreUnavailable. */
  private guard<T>(work: () => Promise<T>): Promise<T> {
    return withinStoreDeadline(work, this.timeoutMs, this.redis);
  }

  /** Resolves when Redis answers a PING in time (GET /health), else StoreUnavailable. */
  async ping(): Promise<void> {
    await this.guard(() => this.redis.ping());
  }
}

/**
 * KEYS[1] the document, then the indexes it joins, then those it leaves. ARGV: the document's
 * JSON (empty: delete it), its score, its id, how many indexes it joins; for a compare-and-set,
 * 'absent' (no document may be stored) or 'equals' and the JSON that must be stored. Returns
 * 0, having written nothing, when the stored document is not the one expected.
 */
const INDEXED_WRITE = `
if ARGV[5] == 'absent' then
  if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
elseif ARGV[5] == 'equals' then
  if redis.call('GET', KEYS[1]) ~= ARGV[6] then return 0 end
end
if ARGV[1] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[1]) end
local joined = tonumber(ARGV[4])
for i = 2, #KEYS do
  if i <= joined + 1 then redis.call('ZADD', KEYS[i], ARGV[2], ARGV[3])
  else redis.call('ZREM', KEYS[i], ARGV[3]) end
end
return 1`;

/** The commands defineCommand adds for the store's scripts. */
interface StoreScripts {
  voxgateIndexedWrite(keyCount: number, ...args: string[]): Promise<number>;
  voxgateReleaseIfOwner(key: string, owner: string): Promise<number>;
}

const RELEASE_IF_OWNER =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

const docKey = (kind: string, tenant: string, id: string) => `vg:{${tenant}}:d:${kind}:${id}`;
const indexKey = (kind: string, tenant: string, name: string) => `vg:{${tenant}}:i:${kind}:${name}`;
const uniqueKey = (key: UniqueKey) => `vg:u:${uniqueId(key)}`;
