import type { MediaSession } from '../pipeline/media-session.js';
import type { RecordingOutcome } from '../recording/recording-spec.js';
import type {
  ConferenceCommand,
  ConferenceResults,
  StartConferenceRecording,
} from './conference-commands.js';
import { ConferenceMixer } from './conference-mixer.js';
import { ConferenceRecorder } from './conference-recorder.js';

/**
 * The conferences one worker holds, by id, and which one each member session is in. A
 * conference's mixer starts with its first member and stops with its last.
 */
export class WorkerConferences {
  private readonly mixers = new Map<string, ConferenceMixer>();
  private readonly memberOf = new Map<string, string>();

  constructor(private readonly clock: { add(tick: () => void): () => void }) {}

  handle<C extends ConferenceCommand>(
    command: C,
    session: MediaSession,
  ): ConferenceResults[C['type']] {
    switch (command.type) {
      case 'joinConference':
        return this.join(command.sessionId, command.conferenceId, session, command) as never;
      case 'leaveConference':
        return { sessionId: command.sessionId, left: this.leave(command.sessionId) } as never;
      case 'updateConferenceMember': {
        const id = this.memberOf.get(command.sessionId);
        const flags = {
          ...(command.muted !== undefined && { muted: command.muted }),
          ...(command.deaf !== undefined && { deaf: command.deaf }),
        };
        const member = id !== undefined && this.mixers.get(id)!.update(command.sessionId, flags);
        return { sessionId: command.sessionId, member } as never;
      }
      case 'startConferenceRecording':
        return this.record(command) as never;
      case 'stopConferenceRecording': {
        const mixer = this.mixerOf(command.sessionId, command.conferenceId);
        return { stopped: mixer.stopRecording(command.recordingId) } as never;
      }
    }
    throw new Error('unknown conference command');
  }

  /** Takes a session out of its conference (it is closing, or leaves); false when in none. */
  leave(sessionId: string): boolean {
    const id = this.memberOf.get(sessionId);
    if (id === undefined) return false;
    this.memberOf.delete(sessionId);
    const mixer = this.mixers.get(id)!;
    mixer.leave(sessionId);
    if (mixer.size === 0) {
      mixer.close();
      this.mixers.delete(id);
    }
    return true;
  }

  /** Records the member's conference until stopped or over; resolves with how it ended. */
  private async record(command: StartConferenceRecording): Promise<RecordingOutcome> {
    const mixer = this.mixerOf(command.sessionId, command.conferenceId);
    const recorder = await ConferenceRecorder.start(command.recording, mixer.rate);
    // The conference may have ended while the file was made.
    if (this.mixers.get(command.conferenceId) === mixer) mixer.record(recorder);
    else void recorder.stop('session-closed');
    return recorder.ended;
  }

  private mixerOf(sessionId: string, conferenceId: string): ConferenceMixer {
    const mixer = this.mixers.get(conferenceId);
    if (!mixer || this.memberOf.get(sessionId) !== conferenceId) {
      throw new Error(`session ${sessionId} is in no conference ${conferenceId} here`);
    }
    return mixer;
  }

  private join(
    sessionId: string,
    conferenceId: string,
    session: MediaSession,
    flags: { muted: boolean; deaf: boolean },
  ): ConferenceResults['joinConference'] {
    const current = this.memberOf.get(sessionId);
    if (current !== undefined) {
      throw new Error(`session ${sessionId} is already in conference ${current}`);
    }
    let mixer = this.mixers.get(conferenceId);
    if (!mixer) {
      mixer = new ConferenceMixer(this.clock);
      this.mixers.set(conferenceId, mixer);
    }
    mixer.join(sessionId, session, { muted: flags.muted, deaf: flags.deaf });
    this.memberOf.set(sessionId, conferenceId);
    return { conferenceId, rate: mixer.rate, members: mixer.size };
  }
}
