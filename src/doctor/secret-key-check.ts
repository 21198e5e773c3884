import type { Config } from '../config/config.js';
import { fail, ok, type CheckResult } from './check-result.js';

/**
 * The key the stored secrets are sealed with (docs/operations.md, Secrets at rest): on Redis it must come
 * from VOXGATE_SECRET_KEY, the same on every node, or the gateway refuses to start.
 */
export function checkSecretKey(config: Config): CheckResult {
  if (config.secretKey) {
    return ok(
      'secret-key',
      'VOXGATE_SECRET_KEY is set; every node sharing this Redis needs the same one',
    );
  }
  return fail(
    'secret-key',
    'VOXGATE_SECRET_KEY is unset: the gateway does not start on Redis without it; set 32 bytes ' +
      '(hex or base64), the same on every node (docs/operations.md, Secrets at rest)',
  );
}
