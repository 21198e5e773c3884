import type { MediaSession } from '../pipeline/media-session.js';
import type { FrameClock } from '../playout/frame-clock.js';
import { CallRecorder } from './call-recorder.js';
import type { RecordingOutcome, RecordingSpec } from './recording-spec.js';

/** A recording of a session: its recorder once its file is made, and a stop asked before then. */
interface RunningRecording {
  recorder: CallRecorder | null;
  stopWith: RecordingOutcome['reason'] | null;
}

/** The recordings running on one worker, by session then by recording id. */
export class SessionRecordings {
  private readonly running = new Map<string, Map<string, RunningRecording>>();

  constructor(private readonly clock: FrameClock) {}

  /**
   * Records `session` until stopped, its maximum length or silence, or the session closing;
   * resolves with how it ended. Throws when the file cannot be made or the id is taken. A
   * recording is known (to stop) from the moment it is asked for: another one started while its
   * file is being made, or a stop that comes then, finds it.
   */
  async record(
    sessionId: string,
    session: MediaSession,
    spec: RecordingSpec,
  ): Promise<RecordingOutcome> {
    let mine = this.running.get(sessionId);
    if (!mine) {
      mine = new Map();
      this.running.set(sessionId, mine);
    }
    if (mine.has(spec.recordingId)) throw new Error(`recording ${spec.recordingId} already runs`);
    const entry: RunningRecording = { recorder: null, stopWith: null };
    mine.set(spec.recordingId, entry);
    try {
      entry.recorder = await CallRecorder.start(spec, session, this.clock);
      if (entry.stopWith) void entry.recorder.stop(entry.stopWith);
      return await entry.recorder.ended;
    } finally {
      mine.delete(spec.recordingId);
      if (mine.size === 0 && this.running.get(sessionId) === mine) this.running.delete(sessionId);
    }
  }

  /** Stops one recording of a session, or all of them; how many were running. */
  stop(
    sessionId: string,
    recordingId?: string,
    reason: RecordingOutcome['reason'] = 'stopped',
  ): number {
    const mine = [...(this.running.get(sessionId)?.entries() ?? [])].filter(
      ([id]) => recordingId === undefined || id === recordingId,
    );
    for (const [, entry] of mine) {
      if (entry.recorder) void entry.recorder.stop(reason);
      else entry.stopWith ??= reason;
    }
    return mine.length;
  }
}
