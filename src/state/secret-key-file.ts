import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { newSecretKeyText, parseSecretKey } from './secret-box.js';

export const SECRET_KEY_FILE = 'secret.key';

/** The secret key of an embedded store kept in its data directory. */
export interface SecretKeyFile {
  key: Buffer;
  /** Absolute path of the file. */
  path: string;
  /** True on the start that generated it. */
  created: boolean;
}

/**
 * Reads the secret key from `secret.key` in the data directory, or generates one there on the
 * first start: 64 hex digits, readable and writable by its owner only (mode 0600). The key
 * stays beside `state.log` but in a file of its own, so a copy of the log alone gives no
 * working credentials. A key file is never replaced: the file is written under a temporary
 * name and linked into place, which fails when a key is already there (it is read instead), so
 * nothing ever sees it half written or loses a key secrets were sealed with.
 */
export async function loadSecretKeyFile(dataDir: string): Promise<SecretKeyFile> {
  const dir = resolve(dataDir);
  const path = join(dir, SECRET_KEY_FILE);
  const existing = await readKey(path);
  if (existing) return { key: existing, path, created: false };
  const staging = join(dir, `.${SECRET_KEY_FILE}.${randomBytes(6).toString('hex')}`);
  const text = newSecretKeyText();
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // 'wx': a new file, never one that exists (nor a link planted under its name).
    await writeFile(staging, `${text}\n`, { flag: 'wx', mode: 0o600 });
    await chmod(staging, 0o600); // whatever the umask left
    await link(staging, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new Error(`could not write the secret key to ${path}: ${(error as Error).message}`);
    }
    const raced = await readKey(path);
    if (!raced) throw new Error(`the secret key file ${path} vanished while it was created`);
    return { key: raced, path, created: false };
  } finally {
    await rm(staging, { force: true });
  }
  return { key: parseSecretKey(text), path, created: true };
}

async function readKey(path: string): Promise<Buffer | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`could not read the secret key ${path}: ${(error as Error).message}`);
  }
  try {
    return parseSecretKey(text);
  } catch (error) {
    throw new Error(`the secret key file ${path} is damaged: ${(error as Error).message}`);
  }
}
