import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Where media files live: bytes by media id. The records (type, size, owner) are in the state;
 * this holds only content, so an object store can take the place of the disk.
 */
export interface MediaStore {
  put(mediaId: string, body: Buffer): Promise<void>;
  /** null when there is no such file. */
  get(mediaId: string): Promise<Buffer | null>;
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

  async get(mediaId: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(mediaId));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
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

  async get(mediaId: string): Promise<Buffer | null> {
    return this.files.get(mediaId) ?? null;
  }

  async remove(mediaId: string): Promise<void> {
    this.files.delete(mediaId);
  }
}
