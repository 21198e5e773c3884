import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UniqueViolation } from '../../../src/core/errors.js';
import type { DocumentEntry } from '../../../src/state/document-store.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import { sleep, until } from '../../support/wait.js';

const entry = (score: number, indexes: string[] = [], unique: string[] = []): DocumentEntry => ({
  score,
  indexes,
  unique: unique.map((value) => ({ space: 'user', value })),
});

const all = { offset: 0, limit: 0 };
const padding = 'x'.repeat(400);

let dir: string;
let logFile: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'voxgate-state-'));
  logFile = join(dir, 'state.log');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Everything a store holds for tenant MA1 and the users u0..u{n-1}, to compare two stores. */
async function contents(store: EmbeddedStore, users: number) {
  const page = await store.page('thing', 'MA1', all);
  const tagged = await store.page('thing', 'MA1', { ...all, index: 'tag:t' });
  const owners = [];
  for (let u = 0; u < users; u++)
    owners.push(await store.findUnique({ space: 'user', value: `u${u}` }));
  return { page, tagged, owners };
}

describe('EmbeddedStore persistence', () => {
  it('writes what is pending at once when asked for durability, instead of after the flush delay', async () => {
    const store = new EmbeddedStore(dir);
    await store.put('thing', 'MA1', 'a', { v: 1 }, entry(3));
    const before = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
    expect(before).not.toContain('"a"');
    await store.durable();
    // Nothing else is waited for: the line is in the file the moment durable() resolves.
    expect(readFileSync(logFile, 'utf8')).toContain('"a"');
    await store.close();
  });

  it('finds its documents, indexes and unique keys again after a restart, updates and removals included', async () => {
    const first = new EmbeddedStore(dir);
    await first.put('thing', 'MA1', 'a', { v: 1 }, entry(3, ['tag:t'], ['alice']));
    await first.put('thing', 'MA1', 'b', { v: 1 }, entry(4, ['tag:t'], ['bob']));
    await first.put('thing', 'MA1', 'c', { v: 1 }, entry(5));
    // b moves out of tag:t and gives alice-like key bob back for carol.
    await first.put(
      'thing',
      'MA1',
      'b',
      { v: 2 },
      entry(4, [], ['carol']),
      entry(4, ['tag:t'], ['bob']),
    );
    await first.remove('thing', 'MA1', 'c', entry(5));
    await first.close();
    expect(statSync(logFile).mode & 0o777).toBe(0o600);

    const second = new EmbeddedStore(dir);
    expect(await second.get('thing', 'MA1', 'a')).toEqual({ v: 1 });
    expect(await second.get('thing', 'MA1', 'b')).toEqual({ v: 2 });
    expect(await second.get('thing', 'MA1', 'c')).toBeNull();
    expect((await second.page('thing', 'MA1', all)).items).toEqual([{ v: 2 }, { v: 1 }]);
    expect((await second.page('thing', 'MA1', { ...all, index: 'tag:t' })).items).toEqual([
      { v: 1 },
    ]);
    expect(await second.findUnique({ space: 'user', value: 'bob' })).toBeNull();
    expect(await second.findUnique({ space: 'user', value: 'carol' })).toEqual({
      tenant: 'MA1',
      id: 'b',
    });
    await expect(
      second.put('thing', 'MA2', 'z', {}, entry(1, [], ['alice'])),
    ).rejects.toBeInstanceOf(UniqueViolation);
    await second.close();
  });

  it('writes a change as that change, not as the whole state again', async () => {
    const store = new EmbeddedStore(dir);
    for (let i = 0; i < 2000; i++) {
      await store.put('thing', 'MA1', `d${i}`, { i, padding }, entry(i, ['tag:t'], [`u${i}`]));
    }
    await store.settled();
    const before = statSync(logFile).size;
    expect(before).toBeGreaterThan(800_000);
    await store.put(
      'thing',
      'MA1',
      'd7',
      { i: 7, padding, changed: true },
      entry(7, ['tag:t'], ['u7']),
      entry(7, ['tag:t'], ['u7']),
    );
    await store.settled();
    const grown = statSync(logFile).size - before;
    expect(grown).toBeGreaterThan(400);
    expect(grown).toBeLessThan(1000);
    await store.close();
  });

  it('rewrites its log as the current state once it has grown, keeping the latest of everything', async () => {
    const store = new EmbeddedStore(dir, { rewriteAfterBytes: 20_000 });
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 20; i++) {
        await store.put('thing', 'MA1', `d${i}`, { i, round, padding }, entry(i, ['tag:t']));
      }
      await store.settled();
    }
    await store.close();
    // 800 writes of about 450 bytes each, but the state is 20 documents.
    expect(statSync(logFile).size).toBeLessThan(3 * 20_000);
    const reopened = new EmbeddedStore(dir);
    const { items } = await reopened.page<{ round: number }>('thing', 'MA1', all);
    expect(items.map((doc) => doc.round)).toEqual(new Array(20).fill(39));
    await reopened.close();
  });

  it('keeps every change made while a rewrite is being written', async () => {
    const store = new EmbeddedStore(dir, { rewriteAfterBytes: 100_000 });
    for (let i = 0; i < 3000; i++) {
      await store.put(
        'thing',
        'MA1',
        `d${i}`,
        { i, padding },
        entry(i, i % 2 ? ['tag:t'] : [], [`u${i}`]),
      );
    }
    const temp = `${logFile}.tmp`;
    let sawRewrite = false;
    let step = 0;
    // Change documents on every turn of the event loop until a rewrite has started and ended.
    while (step < 50_000 && !(sawRewrite && !existsSync(temp))) {
      sawRewrite ||= existsSync(temp);
      const i = step % 3000;
      if (step % 3 === 0) {
        await store.put(
          'thing',
          'MA1',
          `d${i}`,
          { i, step },
          entry(i, ['tag:t'], [`u${i}`]),
          entry(i, i % 2 ? ['tag:t'] : [], [`u${i}`]),
        );
      } else if (step % 3 === 1) {
        await store.remove('thing', 'MA1', `d${i}`, entry(i, ['tag:t', 'other'], [`u${i}`]));
      } else {
        await store.put(
          'thing',
          'MA1',
          `n${step}`,
          { step },
          entry(10_000 + step, ['tag:t'], [`v${step}`]),
        );
      }
      step += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(sawRewrite).toBe(true);
    const live = await contents(store, 3000);
    await store.close();

    const reopened = new EmbeddedStore(dir);
    expect(await contents(reopened, 3000)).toEqual(live);
    await reopened.close();
  });

  it('reports a write that fails (disk full), tries again less and less often, and goes on serving', async () => {
    symlinkSync('/dev/full', logFile);
    const errors: Error[] = [];
    const store = new EmbeddedStore(dir, { onError: (error) => errors.push(error) });
    await store.put('thing', 'MA1', 'a', { v: 1 }, entry(1));
    await until(() => errors.length > 0, 2000);
    expect((errors[0] as NodeJS.ErrnoException).code).toBe('ENOSPC');
    await until(() => errors.length > 1, 2000); // tried again
    // ...less and less often (0.4 s, 0.8 s, 1.6 s...), not every 200 ms.
    await sleep(1500);
    expect(errors.length).toBeLessThanOrEqual(4);
    expect(await store.get('thing', 'MA1', 'a')).toEqual({ v: 1 });
    await store.close();
  });

  it('drops a last line cut short by a crash and appends cleanly after it', async () => {
    const first = new EmbeddedStore(dir);
    await first.put('thing', 'MA1', 'a', { v: 1 }, entry(1));
    await first.close();
    appendFileSync(logFile, '["d","MA1\\u0000thing\\u0000b",{"v"');

    const second = new EmbeddedStore(dir);
    expect(await second.get('thing', 'MA1', 'b')).toBeNull();
    await second.put('thing', 'MA1', 'c', { v: 3 }, entry(3));
    await second.close();

    const third = new EmbeddedStore(dir);
    expect((await third.page('thing', 'MA1', all)).items).toEqual([{ v: 3 }, { v: 1 }]);
    await third.close();
  });

  it('refuses to start on a log damaged before its last line, naming the line', async () => {
    const first = new EmbeddedStore(dir);
    await first.put('thing', 'MA1', 'a', { v: 1 }, entry(1));
    await first.close();
    const lines = readFileSync(logFile, 'utf8').split('\n');
    lines.splice(1, 0, '{not json');
    writeFileSync(logFile, lines.join('\n'));
    expect(() => new EmbeddedStore(dir)).toThrow(/state\.log is damaged at line 2/);
  });

  it('takes over the single snapshot file of earlier versions', async () => {
    const legacy = join(dir, 'state.json');
    writeFileSync(
      legacy,
      JSON.stringify({
        docs: [['MA1\u0000thing\u0000a', '{"v":1}']],
        unique: [['user:alice', { tenant: 'MA1', id: 'a' }]],
        indexes: [['MA1\u0000thing\u0000all', [['a', 1]]]],
      }),
    );
    const first = new EmbeddedStore(dir);
    expect(existsSync(legacy)).toBe(false);
    await first.close();
    const second = new EmbeddedStore(dir);
    expect((await second.page('thing', 'MA1', all)).items).toEqual([{ v: 1 }]);
    expect(await second.findUnique({ space: 'user', value: 'alice' })).toEqual({
      tenant: 'MA1',
      id: 'a',
    });
    await second.close();
  });
});
