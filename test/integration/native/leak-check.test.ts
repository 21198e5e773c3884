import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The addon under valgrind (npm run native:leak-check): every entry point, objects made and
 * dropped, and not one block definitely lost nor one memory error.
 */
const SCRIPT = fileURLToPath(new URL('../../../native/test/leak-check.sh', import.meta.url));

describe('native addon under valgrind', () => {
  it('loses no memory and makes no memory errors', () => {
    const run = spawnSync('bash', [SCRIPT], {
      encoding: 'utf8',
      env: { ...process.env, LEAK_CHECK_ROUNDS: '100' },
      timeout: 120_000,
    });
    if (run.error) throw run.error;
    expect(run.stderr, 'valgrind must be installed (scripts/setup --test)').not.toMatch(
      /valgrind: command not found/,
    );
    expect(run.stderr).not.toMatch(/definitely lost|Invalid (read|write)|uninitialised/);
    expect(run.stdout).toContain('leak-check: 100 rounds done');
    expect(run.status).toBe(0);
  }, 150_000);
});
