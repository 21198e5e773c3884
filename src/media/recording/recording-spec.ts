/** What the main thread asks a worker to record (the startRecording command). */
export interface RecordingSpec {
  recordingId: string;
  /** The file to create; it must not exist yet. */
  path: string;
  /** 1: both sides mixed; 2: the leg's party on the left, what it hears on the right. */
  channels: 1 | 2;
  /** Ends the recording once this long (maxLength, time_limit); none: until stopped. */
  maxMs?: number;
  /** Ends the recording once the party has been quiet this long (Record's timeout). */
  silenceMs?: number;
}

/**
 * How a recording ended: `completed` with the file whole (stopped when asked, at its maximum
 * length, after silence, or with its leg), or `failed` when the file could not be written (the
 * call goes on regardless). Times are epoch ms; the duration is the frames written, 20 ms each.
 */
export interface RecordingOutcome {
  recordingId: string;
  state: 'completed' | 'failed';
  reason: 'stopped' | 'max-length' | 'silence' | 'session-closed' | 'failed';
  durationMs: number;
  startedAt: number;
  endedAt: number;
  rate: number;
  channels: 1 | 2;
  /** Bytes of samples taken (the file is 44 more when whole). */
  bytes: number;
  message?: string;
}
