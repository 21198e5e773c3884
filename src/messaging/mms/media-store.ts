import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Where media files live: bytes by media id. The records (type, size, owner) are in the state;
 * this holds only content, so an object store can take the place of the disk.
 */
export interface MediaStore {
  put(mediaId: string, body: Buffer): Promise<void>;
  /**
   * Stores what `body` yields, without holding it all in memory (a recording of hours);
   * resolves with its bytes. Nothing is kept under the id when the stream fails.
   */
  putStream(mediaId: string, body: Readable): Promise<number>;
  /** null when there is no such file. */
  get(mediaId: string): Promise<Buffer | null>;
  /** The file as a stream, for serving it without reading it whole; null when there is none. */
  open(mediaId: string): Promise<Readable | null>;
  remove(mediaId: string): Promise<void>;
}

const MEDIA_ID = /^[0-9a-f-]{36}$/;

/** Files under `<dataDir>/media/`, one per media id. */
export class DiskMediaStore implements MediaStore {
  constructor(private readonly directory: string) {}

  async put(mediaId: string, body: Buffer): Promise<void> {
    const path = this.path(mediaId);
    await mkdir(this.directory, { recursive: true });
    await writeFile(path, body);
  }

  /** Written beside its final name and renamed once whole: a reader never sees half a file. */
  async putStream(mediaId: string, body: Readable): Promise<number> {
    const path = this.path(mediaId);
    const partial = `${path}.part`;
    await mkdir(this.directory, { recursive: true });
    const out = createWriteStream(partial, { flags: 'w' });
    try {
      await pipeline(body, out);
      await rename(partial, path);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    return out.bytesWritten;
  }

  async get(mediaId: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(mediaId));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async open(mediaId: string): Promise<Readable | null> {
    const stream = createReadStream(this.path(mediaId));
    try {
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      });
    } catch (error) {
      stream.destroy();
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    return stream;
  }

  async remove(mediaId: string): Promise<void> {
    await rm(this.path(mediaId), { force: true });
  }

  /** Ids are uuids we issue; anything else never reaches the file system. */
  private path(mediaId: string): string {
    if (!MEDIA_ID.test(mediaId)) throw new Error(`not a media id: ${mediaId}`);
    return join(this.directory, mediaId);
  }
}

/** In memory, for a gateway that runs without a data directory. */
export class MemoryMediaStore implements MediaStore {
  private readonly files = new Map<string, Buffer>();

  async put(mediaId: string, body: Buffer): Promise<void> {
    this.files.set(mediaId, Buffer.from(body));
  }

  async putStream(mediaId: string, body: Readable): Promise<number> {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
    const whole = Buffer.concat(chunks);
    this.files.set(mediaId, whole);
    return whole.length;
  }

  async get(mediaId: string): Promise<Buffer | null> {
    return this.files.get(mediaId) ?? null;
  }

  async open(mediaId: string): Promise<Readable | null> {
    const file = this.files.get(mediaId);
    return file ? Readable.from([file]) : null;
  }

  async remove(mediaId: string): Promise<void> {
    this.files.delete(mediaId);
  }
}
