import type { RecordingResult } from './call-recordings.js';

/**
 * Whose parameter names a recording's callback uses: the Call Record API's callback_url
 * (`record_url`, `recording_id`...) or the Record element's callbackUrl (`RecordUrl`,
 * `RecordingID`...).
 */
export type CallbackStyle = 'api' | 'xml';

/** The public API writes millisecond figures with five decimals (`5020.00000`). */
export const msFigure = (ms: number): string => ms.toFixed(5);

/**
 * The parameters of a recording callback. Besides the public API's, `recording_status`
 * (`RecordingStatus`) says `completed` or `failed`, and a failed one carries its reason in
 * `recording_error` (`RecordingError`).
 */
export function recordingCallbackParams(
  style: CallbackStyle,
  result: RecordingResult,
  apiId?: string,
): Record<string, string> {
  const seconds = String(Math.round(result.durationMs / 1000));
  if (style === 'api') {
    return {
      ...(apiId === undefined ? {} : { api_id: apiId }),
      record_url: result.url,
      call_uuid: result.callUuid,
      recording_id: result.recordingId,
      recording_duration: seconds,
      recording_duration_ms: msFigure(result.durationMs),
      recording_start_ms: msFigure(result.startMs),
      recording_end_ms: msFigure(result.endMs),
      recording_status: result.state,
      ...(result.message === undefined ? {} : { recording_error: result.message }),
    };
  }
  return {
    RecordUrl: result.url,
    CallUUID: result.callUuid,
    RecordingID: result.recordingId,
    RecordingDuration: seconds,
    RecordingDurationMs: msFigure(result.durationMs),
    RecordingStartMs: msFigure(result.startMs),
    RecordingEndMs: msFigure(result.endMs),
    RecordingStatus: result.state,
    ...(result.message === undefined ? {} : { RecordingError: result.message }),
  };
}
