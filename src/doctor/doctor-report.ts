import type { Config } from '../config/config.js';
import { checkCarrierRegistrations } from './carrier-registration-check.js';
import type { CheckResult } from './check-result.js';
import { ok } from './check-result.js';
import type { DoctorInput } from './doctor-input.js';
import { checkListeners } from './listener-checks.js';
import { checkPrograms } from './program-checks.js';
import { checkInboundCarriers } from './inbound-carriers-check.js';
import { checkPublicHost } from './public-host-check.js';
import { checkRedis } from './redis-checks.js';
import { checkSecretKey } from './secret-key-check.js';
import { checkMediaWorkers, checkRtpRange } from './rtp-checks.js';
import { checkSmppCarrier } from './smpp-check.js';
import { checkTlsFiles } from './tls-checks.js';

/** Every check this configuration calls for, run side by side, reported in a fixed order. */
export async function runChecks(input: DoctorInput): Promise<CheckResult[]> {
  const { config } = input;
  const groups: Promise<CheckResult[]>[] = [
    Promise.resolve([
      ok(
        'config',
        `read as the gateway reads it (environment${
          input.configFile ? `, then VOXGATE_CONFIG_FILE ${input.configFile}` : ''
        })`,
      ),
    ]),
    checkListeners(config),
    Promise.resolve([
      checkRtpRange(config, input.expectedCalls),
      checkMediaWorkers(config, input.expectedCalls),
      checkPublicHost(config, input.publicHostSet),
      checkInboundCarriers(config),
    ]),
    config.sipTls ? checkTlsFiles(config.sipTls) : Promise.resolve([]),
    config.redisUrl
      ? checkRedis(config.redisUrl).then((redis) => [...redis, checkSecretKey(config)])
      : Promise.resolve([]),
    Promise.all(config.smppCarriers.map((carrier) => checkSmppCarrier(carrier))),
    checkCarrierRegistrations(config),
    checkPrograms(input.path),
  ];
  const results = (await Promise.all(groups)).flat();
  return redact(results, secretsOf(config));
}

/** Values no line may show, whatever an error message from a peer repeats. */
export function secretsOf(config: Config): string[] {
  const secrets = [
    config.authToken,
    config.operatorToken,
    config.secretKey,
    config.mm7?.password,
    ...config.smppCarriers.map((c) => c.password),
    ...config.carriers.carriers.map((c) => c.auth?.password),
    ...redisPasswords(config.redisUrl),
  ];
  return secrets.filter((s): s is string => typeof s === 'string' && s.length >= 3);
}

function redisPasswords(url: string | null): string[] {
  if (!url) return [];
  const found: string[] = [];
  const credentials = /\/\/([^@/]*)@/.exec(url)?.[1];
  const password = credentials?.split(':').slice(1).join(':');
  if (password) found.push(decodeURIComponent(password));
  const sentinel = /[?&]sentinel_password=([^&]*)/.exec(url)?.[1];
  if (sentinel) found.push(decodeURIComponent(sentinel));
  return found;
}

function redact(results: CheckResult[], secrets: string[]): CheckResult[] {
  return results.map((result) => ({
    ...result,
    message: secrets.reduce((text, secret) => text.split(secret).join('***'), result.message),
  }));
}

/** `ok    sip-udp        UDP 0.0.0.0:5060 is free` */
export function formatResult(result: CheckResult): string {
  return `${result.status.padEnd(5)} ${result.name.padEnd(17)} ${result.message}`;
}

export function summary(results: CheckResult[]): string {
  const count = (status: CheckResult['status']) =>
    results.filter((r) => r.status === status).length;
  return `voxgate doctor: ${count('ok')} ok, ${count('warn')} warn, ${count('FAIL')} FAIL`;
}
