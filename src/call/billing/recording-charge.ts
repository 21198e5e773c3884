import { multiplyDecimal } from '../../core/decimal-amount.js';

/**
 * What one recording costs: every started minute of it at the recording rate
 * (VOXGATE_RECORDING_RATE), the way streams are billed. A recording of 0 ms costs nothing;
 * 20 ms costs a minute. Each recording is charged alone, so two recordings of one call of
 * 30 s each are two minutes.
 */
export interface RecordingCharge {
  /** The duration rounded up to whole minutes, in seconds (the public API's field). */
  rounded_recording_duration: number;
  /** USD per started minute, as configured. */
  recording_rate: string;
  /** The started minutes at recording_rate, with five decimals. */
  recording_amount: string;
}

export function chargeRecording(durationMs: number, ratePerMinute: string): RecordingCharge {
  if (!Number.isInteger(durationMs) || durationMs < 0) {
    throw new RangeError(
      `Expected a whole number of ms of at least 0 for durationMs but received ${durationMs}`,
    );
  }
  const minutes = Math.ceil(durationMs / 60_000);
  return {
    rounded_recording_duration: minutes * 60,
    recording_rate: ratePerMinute,
    recording_amount: multiplyDecimal(ratePerMinute, minutes),
  };
}

/** What a call's recordings came to, on its record: their ms and their charges summed. */
export interface CallRecordingTotal {
  recording_duration_ms: number;
  recording_amount: string;
}

export function totalOfRecordings(
  durationsMs: readonly number[],
  ratePerMinute: string,
): CallRecordingTotal {
  const minutes = durationsMs.reduce((sum, ms) => sum + Math.ceil(ms / 60_000), 0);
  return {
    recording_duration_ms: durationsMs.reduce((sum, ms) => sum + ms, 0),
    recording_amount: multiplyDecimal(ratePerMinute, minutes),
  };
}
