import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
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

/** `count` chunks of 64 KiB, each filled with its index: 16 MiB for 256. */
function* chunksOf(count: number, failAt = -1): Generator<Buffer> {
  for (let k = 0; k < count; k++) {
    if (k === failAt) throw new Error('the source failed');
    yield Buffer.alloc(65_536, k);
  }
}

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
])(
  'takes a stream and gives one back %s, and keeps nothing of a stream that fails',
  async (_w, open) => {
    const store = open();
    expect(await store.putStream(ID, Readable.from(chunksOf(256)))).toBe(256 * 65_536);
    const read: Buffer[] = [];
    for await (const chunk of (await store.open(ID))!) read.push(chunk as Buffer);
    const whole = Buffer.concat(read);
    expect(whole.length).toBe(256 * 65_536);
    expect([whole[0], whole[65_536 * 100], whole.at(-1)]).toEqual([0, 100, 255]);

    const other = '1f8fad5b-d9cb-469f-a165-70867728950e';
    await expect(store.putStream(other, Readable.from(chunksOf(8, 4)))).rejects.toThrow(
      'the source failed',
    );
    expect(await store.get(other)).toBeNull();
    expect(await store.open(other)).toBeNull();
  },
);

it('leaves no partial file on disk when a stream fails', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-media-'));
  dirs.push(dir);
  const store = new DiskMediaStore(join(dir, 'media'));
  await expect(store.putStream(ID, Readable.from(chunksOf(8, 4)))).rejects.toThrow();
  expect(readdirSync(join(dir, 'media'))).toEqual([]);
});

it('never turns an id into a path outside its directory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-media-'));
  dirs.push(dir);
  const store = new DiskMediaStore(join(dir, 'media'));
  await expect(store.put('../escape', BYTES)).rejects.toThrow('not a media id: ../escape');
  await expect(store.get('../../etc/passwd')).rejects.toThrow('not a media id');
  expect(readdirSync(dir)).toEqual([]);
});
