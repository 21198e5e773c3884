import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { fail, ok, type CheckResult } from './check-result.js';

/** The programs the media workers run, and what stops working without each. */
export const GATEWAY_PROGRAMS = [
  {
    command: 'espeak-ng',
    versionArgs: ['--version'],
    needed: 'Speak (answer XML, and POST Speak/ on a live call) cannot be rendered',
  },
  {
    command: 'ffmpeg',
    versionArgs: ['-hide_banner', '-version'],
    needed: 'Play of wav and mp3 URLs cannot be decoded',
  },
] as const;

/** The first executable file named `command` in the directories of `path`. */
export async function findOnPath(command: string, path: string): Promise<string | null> {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const file = join(dir, command);
    try {
      await access(file, constants.X_OK);
      if ((await stat(file)).isFile()) return file;
    } catch {
      // Not in this directory.
    }
  }
  return null;
}

/**
 * Every call may Speak or Play (any answer document can), so a missing program is a FAIL,
 * whatever else is configured.
 */
export async function checkPrograms(path: string): Promise<CheckResult[]> {
  return Promise.all(
    GATEWAY_PROGRAMS.map(async ({ command, versionArgs, needed }) => {
      const file = await findOnPath(command, path);
      if (!file)
        return fail(
          command,
          `${command} is not on PATH: ${needed}; install it (Debian package ${command}, as ` +
            `scripts/setup does) or add its directory to the gateway's PATH`,
        );
      const version = await firstLine(file, versionArgs);
      return version === null
        ? fail(command, `${file} does not run (${versionArgs.join(' ')} failed): reinstall it`)
        : ok(command, `${file}: ${version}`);
    }),
  );
}

function firstLine(file: string, args: readonly string[]): Promise<string | null> {
  return new Promise((resolve) =>
    execFile(file, args, { timeout: 5000 }, (error, stdout) =>
      resolve(
        error
          ? null
          : (stdout.split('\n')[0] ?? '').replace(/\s+(Copyright|Data at:).*$/, '').trim(),
      ),
    ),
  );
}
