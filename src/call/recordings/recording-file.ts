import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { RecordingFormat } from './recording-record.js';

const run = promisify(execFile);

/** An mp3 encode longer than this (for a file of hours, on a busy machine) is given up. */
const ENCODE_TIMEOUT_MS = 120_000;

/**
 * The file of a finished recording in the format asked for: the worker's WAV as it is, or
 * that WAV encoded to mp3 by ffmpeg (libmp3lame) in a process of its own, off the audio path
 * and off the main thread, once the recording has ended (beside it, `<wavPath>.mp3`).
 */
export async function recordingFile(wavPath: string, format: RecordingFormat): Promise<string> {
  if (format === 'wav') return wavPath;
  const mp3Path = `${wavPath}.mp3`;
  await run(
    'ffmpeg',
    [
      '-nostdin',
      '-v',
      'error',
      '-y',
      '-i',
      wavPath,
      '-codec:a',
      'libmp3lame',
      '-q:a',
      '4',
      mp3Path,
    ],
    { timeout: ENCODE_TIMEOUT_MS },
  );
  return mp3Path;
}

export const CONTENT_TYPES: Record<RecordingFormat, string> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
};
