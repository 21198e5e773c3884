import type { MessagePort } from 'node:worker_threads';
import type { MediaSession } from '../pipeline/media-session.js';
import type { RecordingOutcome } from '../recording/recording-spec.js';
import type {
  ConferenceCommand,
  ConferenceResults,
  JoinConference,
  StartConferenceRecording,
} from './conference-commands.js';
import { ConferenceMixer, type MemberSession } from './conference-mixer.js';
import { ConferenceRecorder } from './conference-recorder.js';
import { LinkedMember, MemberLink } from './worker-link.js';

type Clock = { add(tick: () => void): () => void };

/**
 * The conferences one worker holds, by id, and which one each member session is in; and the
 * links between them and members on other workers: the conference's end of each (a
 * LinkedMember in the mix), and the member's end of each whose leg runs here (a MemberLink). A
 * conference's mixer starts with its first member and stops with its last. `onFloor` hears of
 * each member taking the floor of a conference mixed here (its session may be on another
 * worker, linked).
 */
export class WorkerConferences {
  private readonly mixers = new Map<string, ConferenceMixer>();
  private readonly memberOf = new Map<string, string>();
  /** The conference's end of links, by the member's session id. */
  private readonly linked = new Map<string, LinkedMember>();
  /** The member's end of links, by its session id (a session of this worker). */
  private readonly links = new Map<string, MemberLink>();

  constructor(
    private readonly clock: Clock,
    private readonly onFloor: (sessionId: string, conferenceId: string) => void = () => {},
  ) {}

  /** `session` finds a session of this worker (throwing when there is none). */
  handle<C extends ConferenceCommand>(
    command: C,
    session: (sessionId: string) => MediaSession,
  ): ConferenceResults[C['type']] {
    switch (command.type) {
      case 'joinConference':
        return this.join(command, session) as never;
      case 'linkConference':
        return this.link(command.sessionId, session(command.sessionId), command.port) as never;
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

  /**
   * Takes a session out of its conference or ends its link to one (it is closing, or leaves);
   * false when in none.
   */
  leave(sessionId: string): boolean {
    const link = this.links.get(sessionId);
    if (link) {
      this.links.delete(sessionId);
      link.close();
      return true;
    }
    const id = this.memberOf.get(sessionId);
    if (id === undefined) return false;
    this.memberOf.delete(sessionId);
    const mixer = this.mixers.get(id)!;
    mixer.leave(sessionId);
    const linked = this.linked.get(sessionId);
    this.linked.delete(sessionId);
    linked?.close();
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

  private link(
    sessionId: string,
    session: MediaSession,
    port: MessagePort,
  ): ConferenceResults['linkConference'] {
    if (this.links.has(sessionId) || this.memberOf.has(sessionId)) {
      port.close();
      throw new Error(`session ${sessionId} is already in a conference`);
    }
    const link = new MemberLink(session, port, () => {
      if (this.links.get(sessionId) === link) this.links.delete(sessionId);
    });
    this.links.set(sessionId, link);
    return { sessionId, rate: link.rate };
  }

  private join(
    command: JoinConference,
    session: (sessionId: string) => MediaSession,
  ): ConferenceResults['joinConference'] {
    const { sessionId, conferenceId, link } = command;
    const current = this.memberOf.get(sessionId);
    if (current !== undefined) {
      link?.port.close();
      throw new Error(`session ${sessionId} is already in conference ${current}`);
    }
    const own = link ? null : session(sessionId);
    let mixer = this.mixers.get(conferenceId);
    if (!mixer) {
      mixer = new ConferenceMixer(this.clock, (member) => this.onFloor(member, conferenceId));
      this.mixers.set(conferenceId, mixer);
    }
    let member: MemberSession;
    if (link) {
      // Made after its mixer, so that it ticks after the mix on every tick.
      const linked = new LinkedMember(link.rate, link.port, this.clock, () => {
        if (this.linked.get(sessionId) === linked) this.leave(sessionId);
      });
      this.linked.set(sessionId, linked);
      member = linked;
    } else member = own!;
    mixer.join(sessionId, member, { muted: command.muted, deaf: command.deaf });
    this.memberOf.set(sessionId, conferenceId);
    return { conferenceId, rate: mixer.rate, members: mixer.size };
  }
}
