import { SettingError } from '../../core/setting-error.js';
/**
 * The settings of call recordings, read once at start (config/config.ts reads the environment
 * through this):
 *
 * - `VOXGATE_RECORDING_RETENTION_DAYS`: days a recording (its file and its record) is kept
 *   after it was stored; older ones are swept away with the expired call records, at start and
 *   hourly (90, as call records; 0 keeps recordings until deleted).
 * - `VOXGATE_RECORDING_RATE`: USD per started minute of each recording, as a decimal string
 *   (`0.00000`: recording is free). A recording is charged on its own Recording record and
 *   summed on its call's record (docs/recordings.md, Billing).
 */
export interface RecordingSettings {
  /** ms a recording is kept; null: until deleted. */
  retentionMs: number | null;
  ratePerMinute: string;
}

export const DEFAULT_RECORDING_RETENTION_DAYS = 90;
export const DEFAULT_RECORDING_RATE = '0.00000';
const DAY_MS = 24 * 60 * 60 * 1000;
/** Ten years: beyond it a figure is a typo, not a policy. */
const MAX_RETENTION_DAYS = 3650;

type Env = Record<string, string | undefined>;

export function readRecordingSettings(env: Env): RecordingSettings {
  const days = env.VOXGATE_RECORDING_RETENTION_DAYS;
  let retentionDays = DEFAULT_RECORDING_RETENTION_DAYS;
  if (days !== undefined && days !== '') {
    if (!/^\d+$/.test(days) || Number(days) > MAX_RETENTION_DAYS) {
      throw new SettingError(
        'VOXGATE_RECORDING_RETENTION_DAYS',
        `must be a whole number of days from 0 (keep until deleted) to ${MAX_RETENTION_DAYS}`,
        days,
      );
    }
    retentionDays = Number(days);
  }
  const rate = env.VOXGATE_RECORDING_RATE;
  if (rate !== undefined && rate !== '' && !/^\d{1,6}(\.\d{1,10})?$/.test(rate)) {
    throw new SettingError(
      'VOXGATE_RECORDING_RATE',
      'must be a decimal number of USD per minute such as 0.00250',
      rate,
    );
  }
  return {
    retentionMs: retentionDays === 0 ? null : retentionDays * DAY_MS,
    ratePerMinute: rate || DEFAULT_RECORDING_RATE,
  };
}
