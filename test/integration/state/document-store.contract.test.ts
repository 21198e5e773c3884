import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UniqueViolation } from '../../../src/core/errors.js';
import { Collection, type Owned } from '../../../src/state/collection.js';
import type { DocumentEntry, DocumentStore } from '../../../src/state/document-store.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import { RedisStore } from '../../../src/state/redis-store.js';
import { startRedisCluster, type RedisCluster } from '../../support/redis-cluster.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';

interface Doc extends Owned {
  id: string;
  user: string | null;
  tag: string | null;
}

const entry = (score: number, indexes: string[] = [], unique: string[] = []): DocumentEntry => ({
  score,
  indexes,
  unique: unique.map((value) => ({ space: 'user', value })),
});

let redis: RedisServer;
let cluster: RedisCluster;
beforeAll(async () => {
  [redis, cluster] = await Promise.all([startRedis(), startRedisCluster()]);
}, 30_000);
afterAll(async () => {
  await Promise.all([redis?.stop(), cluster?.stop()]);
});

const targets: [string, () => Promise<DocumentStore>][] = [
  ['embedded', async () => new EmbeddedStore(null)],
  [
    'redis',
    async () => {
      await redis.flush();
      return RedisStore.connect(redis.url);
    },
  ],
  [
    // Three masters: a tenant's keys share one slot, unique keys spread over all of them.
    'redis cluster',
    async () => {
      await cluster.flush();
      return RedisStore.connect(cluster.url);
    },
  ],
];

describe.each(targets)('DocumentStore contract: %s', (_name, open) => {
  let store: DocumentStore;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    await store.close();
  });

  it('stores and returns JSON documents, keeping tenants apart', async () => {
    await store.put('thing', 'MA1', 'x', { a: 1 }, entry(1));
    await store.put('thing', 'MA2', 'x', { a: 2 }, entry(1));
    expect(await store.get('thing', 'MA1', 'x')).toEqual({ a: 1 });
    expect(await store.get('thing', 'MA2', 'x')).toEqual({ a: 2 });
    expect(await store.get('thing', 'MA1', 'y')).toBeNull();
    expect(await store.get('other', 'MA1', 'x')).toBeNull();
  });

  it('hands out copies: changing a returned document does not change the stored one', async () => {
    await store.put('thing', 'MA1', 'x', { list: [1] }, entry(1));
    const got = await store.get<{ list: number[] }>('thing', 'MA1', 'x');
    got!.list.push(2);
    expect(await store.get('thing', 'MA1', 'x')).toEqual({ list: [1] });
  });

  it('claims unique keys globally and changes nothing when one is taken', async () => {
    await store.put('thing', 'MA1', 'a', { n: 'a' }, entry(1, [], ['alice']));
    const clash = store.put('thing', 'MA2', 'b', { n: 'b' }, entry(2, ['tag:t'], ['bob', 'alice']));
    await expect(clash).rejects.toBeInstanceOf(UniqueViolation);
    await expect(clash).rejects.toMatchObject({ space: 'user', value: 'alice' });
    expect(await store.get('thing', 'MA2', 'b')).toBeNull();
    expect((await store.page('thing', 'MA2', { offset: 0, limit: 0 })).total).toBe(0);
    // 'bob' was claimed before the clash and was given back.
    expect(await store.findUnique({ space: 'user', value: 'bob' })).toBeNull();
    expect(await store.findUnique({ space: 'user', value: 'alice' })).toEqual({
      tenant: 'MA1',
      id: 'a',
    });
  });

  it('treats creating an existing unique id as a clash, not an overwrite', async () => {
    await store.put('thing', 'MA1', 'a', { v: 1 }, entry(1, [], ['alice']));
    await expect(
      store.put('thing', 'MA1', 'a', { v: 2 }, entry(1, [], ['alice'])),
    ).rejects.toBeInstanceOf(UniqueViolation);
    expect(await store.get('thing', 'MA1', 'a')).toEqual({ v: 1 });
  });

  it('moves index entries and unique keys on update', async () => {
    await store.put('thing', 'MA1', 'a', { v: 1 }, entry(5, ['tag:red'], ['alice']));
    await store.put(
      'thing',
      'MA1',
      'a',
      { v: 2 },
      entry(5, ['tag:blue'], ['alicia']),
      entry(5, ['tag:red'], ['alice']),
    );
    expect(await store.get('thing', 'MA1', 'a')).toEqual({ v: 2 });
    expect(
      (await store.page('thing', 'MA1', { index: 'tag:red', offset: 0, limit: 0 })).total,
    ).toBe(0);
    expect(
      (await store.page('thing', 'MA1', { index: 'tag:blue', offset: 0, limit: 0 })).items,
    ).toEqual([{ v: 2 }]);
    expect(await store.findUnique({ space: 'user', value: 'alice' })).toBeNull();
    expect(await store.findUnique({ space: 'user', value: 'alicia' })).toEqual({
      tenant: 'MA1',
      id: 'a',
    });
    // The released key is free for someone else.
    await store.put('thing', 'MA2', 'b', {}, entry(1, [], ['alice']));
  });

  it('keeps index entries through updates that change only the document, and moves them with a new score', async () => {
    await store.put('thing', 'MA1', 'a', { v: 1 }, entry(5, ['tag:red']));
    await store.put('thing', 'MA1', 'b', { v: 1 }, entry(7, ['tag:red']));
    await store.put('thing', 'MA1', 'a', { v: 2 }, entry(5, ['tag:red']), entry(5, ['tag:red']));
    const red = () => store.page('thing', 'MA1', { index: 'tag:red', offset: 0, limit: 0 });
    const all = () => store.page('thing', 'MA1', { offset: 0, limit: 0, ascending: true });
    expect((await red()).items).toEqual([{ v: 1 }, { v: 2 }]);
    expect((await all()).items).toEqual([{ v: 2 }, { v: 1 }]);
    await store.put('thing', 'MA1', 'a', { v: 3 }, entry(9, ['tag:red']), entry(5, ['tag:red']));
    expect((await all()).items).toEqual([{ v: 1 }, { v: 3 }]);
    expect((await red()).items).toEqual([{ v: 3 }, { v: 1 }]);
  });

  it('removes a document with its index entries and unique keys', async () => {
    await store.put('thing', 'MA1', 'a', { v: 1 }, entry(1, ['tag:red'], ['alice']));
    await store.remove('thing', 'MA1', 'a', entry(1, ['tag:red'], ['alice']));
    expect(await store.get('thing', 'MA1', 'a')).toBeNull();
    expect((await store.page('thing', 'MA1', { offset: 0, limit: 0 })).total).toBe(0);
    expect(
      (await store.page('thing', 'MA1', { index: 'tag:red', offset: 0, limit: 0 })).total,
    ).toBe(0);
    expect(await store.findUnique({ space: 'user', value: 'alice' })).toBeNull();
  });

  it('compares and sets: writes only over the document it read, moving its index entries', async () => {
    const ids = async (index: string) =>
      (await store.page<{ v: number }>('thing', 'MA1', { index, offset: 0, limit: 0 })).items.map(
        (d) => d.v,
      );
    const first = { v: 1, list: ['a'] };
    expect(
      await store.swap('thing', 'MA1', 'x', {
        expected: null,
        next: first,
        entry: entry(5, ['node:a']),
      }),
    ).toBe(true);
    // Another writer created it first: a create over it is refused.
    expect(
      await store.swap('thing', 'MA1', 'x', { expected: null, next: { v: 9 }, entry: entry(5) }),
    ).toBe(false);
    const read = await store.get<typeof first>('thing', 'MA1', 'x');
    const second = { v: 2, list: ['a', 'b'] };
    const move = {
      expected: read,
      next: second,
      entry: entry(5, ['node:b']),
      previous: entry(5, ['node:a']),
    };
    expect(await store.swap('thing', 'MA1', 'x', move)).toBe(true);
    // The same read again is stale now: nothing written.
    expect(await store.swap('thing', 'MA1', 'x', { ...move, next: { v: 3, list: [] } })).toBe(
      false,
    );
    expect(await store.get('thing', 'MA1', 'x')).toEqual(second);
    expect(await ids('node:a')).toEqual([]);
    expect(await ids('node:b')).toEqual([2]);
    // Removing takes the read it removes, and its index entries go with it.
    const gone = { expected: first, next: null, entry: entry(5), previous: entry(5, ['node:b']) };
    expect(await store.swap('thing', 'MA1', 'x', gone)).toBe(false);
    expect(
      await store.swap('thing', 'MA1', 'x', {
        ...gone,
        expected: await store.get('thing', 'MA1', 'x'),
      }),
    ).toBe(true);
    expect(await store.get('thing', 'MA1', 'x')).toBeNull();
    expect(await ids('node:b')).toEqual([]);
    expect(await ids('all')).toEqual([]);
    await expect(
      store.swap('thing', 'MA1', 'y', {
        expected: null,
        next: { v: 1 },
        entry: entry(1, [], ['alice']),
      }),
    ).rejects.toThrow('moves no unique keys');
  });

  it('pages newest first by default, oldest first on request, with totals', async () => {
    for (let i = 1; i <= 7; i++) await store.put('thing', 'MA1', `d${i}`, { i }, entry(i * 10));
    const newest = await store.page<{ i: number }>('thing', 'MA1', { offset: 0, limit: 3 });
    expect(newest).toEqual({ items: [{ i: 7 }, { i: 6 }, { i: 5 }], total: 7 });
    const next = await store.page<{ i: number }>('thing', 'MA1', { offset: 6, limit: 3 });
    expect(next).toEqual({ items: [{ i: 1 }], total: 7 });
    const oldest = await store.page<{ i: number }>('thing', 'MA1', {
      offset: 1,
      limit: 2,
      ascending: true,
    });
    expect(oldest.items).toEqual([{ i: 2 }, { i: 3 }]);
    const empty = await store.page('thing', 'MA1', { offset: 10, limit: 3 });
    expect(empty).toEqual({ items: [], total: 7 });
  });

  it('reads a time window from the sorted index without touching what is outside it', async () => {
    const day = 86_400_000;
    const start = Date.UTC(2026, 0, 1);
    // 120 days of records, two a day; a 30-day window holds 60 of them, bounds inclusive.
    for (let d = 0; d < 120; d++) {
      for (const h of [0, 12])
        await store.put(
          'record',
          'MA1',
          `r${d}-${h}`,
          { d, h },
          entry(start + d * day + h * 3_600_000),
        );
    }
    const window = await store.page<{ d: number; h: number }>('record', 'MA1', {
      scoreMin: start + 30 * day,
      scoreMax: start + 60 * day - 1,
      offset: 0,
      limit: 20,
    });
    expect(window.total).toBe(60);
    expect(window.items).toHaveLength(20);
    expect(window.items[0]).toEqual({ d: 59, h: 12 });
    const exact = await store.page('record', 'MA1', {
      scoreMin: start + 45 * day,
      scoreMax: start + 45 * day,
      offset: 0,
      limit: 0,
    });
    expect(exact.items).toEqual([{ d: 45, h: 0 }]);
  });

  it('keeps equal scores in id order, as a Redis sorted set does', async () => {
    for (const id of ['b', 'c', 'a']) await store.put('thing', 'MA1', id, { id }, entry(1));
    const page = await store.page<{ id: string }>('thing', 'MA1', {
      offset: 0,
      limit: 0,
      ascending: true,
    });
    expect(page.items.map((d) => d.id)).toEqual(['a', 'b', 'c']);
  });

  it('backs typed collections: subaccount indexes, unique lookups', async () => {
    const things = new Collection<Doc>(store, {
      kind: 'doc',
      id: (d) => d.id,
      indexes: (d) => (d.tag ? [`tag:${d.tag}`] : []),
      unique: (d) => (d.user ? [{ space: 'user', value: d.user }] : []),
    });
    const doc = (
      id: string,
      subaccount: string | null,
      user: string | null,
      created: number,
    ): Doc => ({
      account: 'MA1',
      subaccount,
      created,
      id,
      user,
      tag: 'x',
    });
    await things.create(doc('1', null, 'ann', 1));
    await things.create(doc('2', 'SA1', 'ben', 2));
    await things.create(doc('3', 'SA1', null, 3));
    expect((await things.all('MA1', 'sub:SA1')).map((d) => d.id)).toEqual(['3', '2']);
    expect((await things.findByUnique({ space: 'user', value: 'ben' }))?.id).toBe('2');
    const moved = { ...doc('2', null, 'ben', 2) };
    await things.update(moved, doc('2', 'SA1', 'ben', 2));
    expect((await things.all('MA1', 'sub:SA1')).map((d) => d.id)).toEqual(['3']);
    await expect(things.create(doc('4', null, 'ann', 4))).rejects.toBeInstanceOf(UniqueViolation);
  });
});

describe('RedisStore key layout', () => {
  it('puts everything a tenant owns under its hash tag and unique keys alone', async () => {
    await redis.flush();
    const store = RedisStore.connect(redis.url);
    await store.put('endpoint', 'MAABC', 'e1', {}, entry(1, ['sub:SA1'], ['alice']));
    const client = new Redis(redis.url);
    const keys = (await client.keys('*')).sort();
    await client.quit();
    await store.close();
    expect(keys).toEqual([
      'vg:u:user:alice',
      'vg:{MAABC}:d:endpoint:e1',
      'vg:{MAABC}:i:endpoint:all',
      'vg:{MAABC}:i:endpoint:sub:SA1',
    ]);
  });
});
