import { loadConfig, readFileDefaults, type Config } from '../config/config.js';

type Env = Record<string, string | undefined>;

/** What the doctor checks: the gateway's own configuration, and the few facts only it needs. */
export interface DoctorInput {
  config: Config;
  /** Whether VOXGATE_PUBLIC_HOST was given (else 127.0.0.1 is the default). */
  publicHostSet: boolean;
  /** Calls the deployment should carry at once (VOXGATE_EXPECTED_CALLS), for the RTP range. */
  expectedCalls: number;
  /** Where programs are looked for (the gateway runs espeak-ng and ffmpeg from it). */
  path: string;
  /** The JSON file the settings may come from, if any. */
  configFile: string | null;
}

export const DEFAULT_EXPECTED_CALLS = 100;

export class DoctorSettingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DoctorSettingError';
  }
}

/**
 * Reads the configuration exactly as the gateway does (loadConfig throws its ConfigError on a
 * bad value); the doctor's own names are read from the same environment and file.
 */
export function readDoctorInput(processEnv: Env = process.env): DoctorInput {
  const config = loadConfig(processEnv);
  // The environment wins over the file, as in loadConfig.
  const env: Env = { ...readFileDefaults(processEnv), ...processEnv };
  return {
    config,
    publicHostSet: (env.VOXGATE_PUBLIC_HOST ?? '') !== '',
    expectedCalls: expectedCalls(env.VOXGATE_EXPECTED_CALLS),
    path: processEnv.PATH ?? '',
    configFile: processEnv.VOXGATE_CONFIG_FILE || null,
  };
}

function expectedCalls(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_EXPECTED_CALLS;
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    throw new DoctorSettingError(
      `VOXGATE_EXPECTED_CALLS=${JSON.stringify(raw)} is invalid: must be a whole number of at least 1`,
    );
  return Number(raw);
}
