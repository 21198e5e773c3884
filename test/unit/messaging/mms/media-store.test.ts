import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { DiskMediaStore, MemoryMediaStore } from '../../../../src/messaging/mms/media-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const BYTES = Buffer.from(Array.from({ length: 256 }, (_, k) => k));

it.each([
  [
    'on disk',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'voxgate-media-'));
      dirs.push(dir);
      return new DiskMediaStore(join(dir, 'media'));
    },
  ],
  ['in memory', () => new MemoryMediaStore()],
])('keeps media bytes %s, byte for byte, until removed', async (_where, open) => {
  const store = open();
  expect(await store.get(ID)).toBeNull();
  await store.put(ID, BYTES);
  expect((await store.get(ID))!.equals(BYTES)).toBe(true);
  await store.remove(ID);
  expect(await store.get(ID)).toBeNull();
  await store.remove(ID);
});

it('never turns an id into a path outside its directory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-media-'));
  dirs.push(dir);
  const store = new DiskMediaStore(join(dir, 'media'));
  await expect(store.put('../escape', BYTES)).rejects.toThrow('not a media id: ../escape');
  await expect(store.get('../../etc/passwd')).rejects.toThrow('not a media id');
  expect(readdirSync(dir)).toEqual([]);
});
