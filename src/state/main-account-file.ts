import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

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
    throw new Error(
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
    throw new Error(
      `could not write the generated main account's credentials to ${path}: ${(error as Error).message}`,
    );
  }
  return {
    path,
    temporary,
    remove: () => rm(temporary ? dir : path, { recursive: temporary, force: true }),
  };
}
