import type { MediaSession } from '../pipeline/media-session.js';
import type { FrameClock } from '../playout/frame-clock.js';
import { CallRecorder } from './call-recorder.js';
import type { RecordingOutcome, RecordingSpec } from './recording-spec.js';

/** The recordings running on one worker, by session then by recording id. */
export class SessionRecordings {
  private readonly running = new Map<string, Map<string, CallRecorder>>();

  constructor(private readonly clock: FrameClock) {}

  /**
   * Records `session` until stopped, its maximum length or silence, or the session closing;
   * resolves with how it ended. Throws when the file cannot be made or the id is taken.
   */
  async record(
    sessionId: string,
    session: MediaSession,
    spec: RecordingSpec,
    relayPeer: () => MediaSession | null,
  ): Promise<RecordingOutcome> {
    const mine = this.running.get(sessionId) ?? new Map<string, CallRecorder>();
    if (mine.has(spec.recordingId)) throw new Error(`recording ${spec.recordingId} already runs`);
    const recorder = await CallRecorder.start(spec, session, this.clock, relayPeer);
    mine.set(spec.recordingId, recorder);
    this.running.set(sessionId, mine);
    const outcome = await recorder.ended;
    mine.delete(spec.recordingId);
    if (mine.size === 0 && this.running.get(sessionId) === mine) this.running.delete(sessionId);
    return outcome;
  }

  /** Stops one recording of a session, or all of them; how many were running. */
  stop(
    sessionId: string,
    recordingId?: string,
    reason: RecordingOutcome['reason'] = 'stopped',
  ): number {
    const mine = [...(this.running.get(sessionId)?.values() ?? [])].filter(
      (r) => recordingId === undefined || r.recordingId === recordingId,
    );
    for (const recorder of mine) void recorder.stop(reason);
    return mine.length;
  }
}
