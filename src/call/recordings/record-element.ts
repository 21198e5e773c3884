import type { PlaySource } from '../../media/worker/protocol.js';
import type { AppCall } from '../app/app-call.js';
import type { RecordingRequest } from './call-recordings.js';
import type { RecordInstruction } from '../xml/record-instruction.js';
import { msFigure } from './recording-callback.js';

/** The beep before a recording: 1 kHz for a quarter of a second. */
const BEEP: PlaySource = { kind: 'tone', frequencies: [1000], durationMs: 250 };

/**
 * Runs a Record element. In the background (recordSession, startOnDialAnswer) the whole call
 * is recorded in stereo until it ends, and null is returned at once: the document goes on.
 * With startOnDialAnswer the recording starts once the next Dial connects its B leg (not at
 * all if none does), so the ringing is not in the file.
 * Otherwise the caller is recorded after the beep until silence (timeout), maxLength or one of
 * finishOnKey's keys, and the action's parameters are returned.
 */
export async function runRecord(
  call: AppCall,
  instruction: RecordInstruction,
): Promise<Record<string, string> | null> {
  if (!call.record) throw new Error('this gateway does not record calls');
  call.answer();
  const callback = instruction.callbackUrl
    ? { url: instruction.callbackUrl, method: instruction.callbackMethod, style: 'xml' as const }
    : null;
  const session: RecordingRequest = { format: instruction.fileFormat, channels: 2, callback };
  if (instruction.startOnDialAnswer && call.onDialAnswer) {
    const record = call.record;
    call.onDialAnswer(() => {
      if (call.over) return;
      record.call(call, session).catch((error: Error) =>
        call.log('Record startOnDialAnswer: the recording did not start', {
          reason: error.message,
        }),
      );
    });
    return null;
  }
  if (instruction.recordSession || instruction.startOnDialAnswer) {
    await call.record(session);
    return null;
  }
  if (instruction.playBeep) await call.play(BEEP, {});
  const started = await call.record({
    format: instruction.fileFormat,
    channels: 1,
    maxMs: instruction.maxLength * 1000,
    silenceMs: instruction.timeout * 1000,
    callback,
  });
  let digits = '';
  const keys = instruction.finishOnKey;
  const unlisten =
    keys === '' || !call.onDigit
      ? () => {}
      : call.onDigit((digit) => {
          if (digits !== '' || !keys.includes(digit)) return;
          digits = digit;
          void started.stop();
        });
  const result = await started.ended;
  unlisten();
  return {
    RecordUrl: result.url,
    RecordingID: result.recordingId,
    RecordingDuration: String(Math.round(result.durationMs / 1000)),
    RecordingDurationMs: msFigure(result.durationMs),
    RecordingStartMs: msFigure(result.startMs),
    RecordingEndMs: msFigure(result.endMs),
    Digits: digits,
  };
}
