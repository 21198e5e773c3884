import { ConfigError } from '../config/config.js';
import { fail } from './check-result.js';
import { DoctorSettingError, readDoctorInput, type DoctorInput } from './doctor-input.js';
import { formatResult, runChecks, summary } from './doctor-report.js';

/**
 * `npm run doctor`: checks a deployment's configuration and surroundings, one line a check.
 * Exit status 0 when nothing failed (warnings allowed), 1 otherwise.
 */
async function main(): Promise<number> {
  let input: DoctorInput;
  try {
    input = readDoctorInput();
  } catch (error) {
    if (!(error instanceof ConfigError) && !(error instanceof DoctorSettingError)) throw error;
    // The gateway would not start at all: nothing else is worth checking.
    process.stdout.write(`${formatResult(fail('config', error.message))}\n`);
    return 1;
  }
  const results = await runChecks(input);
  for (const result of results) process.stdout.write(`${formatResult(result)}\n`);
  process.stdout.write(`${summary(results)}\n`);
  return results.some((r) => r.status === 'FAIL') ? 1 : 0;
}

main().then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    process.stderr.write(`voxgate doctor: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
