import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { KeptCredentials } from './main-account.js';

/** Where a generated main account's credentials were written. */
export interface MainAccountFile {
  /** Absolute path of the file. */
  path: string;
  /** True when there was no data directory: the file is in a private directory of its own. */
  temporary: boolean;
  /** Removes the file (and its private directory, when temporary). */
  remove(): Promise<void>;
}

export const MAIN_ACCOUNT_FILE = 'main-account.env';

/** The credentials file could not be made, written or read: the message says where and why. */
export class CredentialsFileError extends Error {
  override name = 'CredentialsFileError';
}

/**
 * Writes a generated main account's auth id and token, as `VOXGATE_AUTH_ID=` and
 * `VOXGATE_AUTH_TOKEN=` lines (an env file), to `main-account.env` in the data directory,
 * readable and writable by its owner only (mode 0600): a container's stdout is its log, so the
 * token is never printed. Without a data directory (the in-memory store) the file goes into a
 * new directory of its own under the system's temporary directory (mode 0700).
 *
 * The file is written under a temporary name and renamed into place, so it is never seen
 * half written or with a wider mode, and an older file (an account generated before the state
 * was lost) is replaced whole. A failure is thrown with the path in its message.
 */
export async function writeMainAccountFile(
  dataDir: string | null,
  account: { authId: string; authToken: string },
): Promise<MainAccountFile> {
  const temporary = dataDir === null;
  let dir: string;
  try {
    dir = temporary
      ? await mkdtemp(join(tmpdir(), 'voxgate-'))
      : (await mkdir(resolve(dataDir), { recursive: true, mode: 0o700 }), resolve(dataDir));
  } catch (error) {
    throw new CredentialsFileError(
      `could not make a directory for the generated main account's credentials: ${(error as Error).message}`,
    );
  }
  const path = join(dir, MAIN_ACCOUNT_FILE);
  const staging = join(dir, `.${MAIN_ACCOUNT_FILE}.${randomBytes(6).toString('hex')}`);
  const text =
    '# The main account this gateway generated on its first start. Readable by its owner only.\n' +
    `VOXGATE_AUTH_ID=${account.authId}\nVOXGATE_AUTH_TOKEN=${account.authToken}\n`;
  try {
    // 'wx': a new file, never one that exists (nor a link planted under its name).
    await writeFile(staging, text, { flag: 'wx', mode: 0o600 });
    await chmod(staging, 0o600); // whatever the umask left
    await rename(staging, path);
  } catch (error) {
    await rm(staging, { force: true });
    throw new CredentialsFileError(
      `could not write the generated main account's credentials to ${path}: ${(error as Error).message}`,
    );
  }
  return {
    path,
    temporary,
    remove: () => rm(temporary ? dir : path, { recursive: temporary, force: true }),
  };
}

/**
 * The credentials an earlier start wrote to `main-account.env` in the data directory, or null
 * when there is none (or no data directory: a file of the in-memory store dies with its
 * process). A file that is there but holds no valid pair stops the start: generating another
 * account would replace credentials a user may have copied from it.
 */
export async function readMainAccountFile(dataDir: string | null): Promise<KeptCredentials | null> {
  if (dataDir === null) return null;
  const path = join(resolve(dataDir), MAIN_ACCOUNT_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    // Nothing there to adopt (a directory in its place fails the write, which says so).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR') return null;
    throw new CredentialsFileError(
      `could not read the main account's credentials in ${path}: ${(error as Error).message}`,
    );
  }
  const authId = /^VOXGATE_AUTH_ID=(MA[A-Z0-9]{18})$/m.exec(text)?.[1];
  const authToken = /^VOXGATE_AUTH_TOKEN=([A-Za-z0-9]{40})$/m.exec(text)?.[1];
  if (!authId || !authToken)
    throw new CredentialsFileError(
      `${path} holds no VOXGATE_AUTH_ID and VOXGATE_AUTH_TOKEN lines as the gateway wrote them: ` +
        'restore it, or remove it to have a new main account generated',
    );
  return { authId, authToken, path };
}
