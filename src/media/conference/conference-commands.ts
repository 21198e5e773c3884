import type { RecordingOutcome, RecordingSpec } from '../recording/recording-spec.js';
import type { MessagePort } from 'node:worker_threads';
import type { SampleRate } from '../codec/argument-checks.js';

/**
 * The media worker's conference commands (part of the worker protocol, protocol.ts). A
 * conference is mixed on one worker. A member whose leg runs there joins it directly; one
 * whose leg runs on another worker is linked: `linkConference` to the leg's worker hands it one
 * end of a MessageChannel, and `joinConference` with `link` to the conference's worker the
 * other (the port goes in the command's transfer list).
 */
export interface JoinConference {
  type: 'joinConference';
  sessionId: string;
  conferenceId: string;
  muted: boolean;
  deaf: boolean;
  /** The member's leg runs on another worker: its audio comes and goes over `port`. */
  link?: { port: MessagePort; rate: SampleRate };
}

/** Sent to the worker of the member's leg: its audio goes to the conference over `port`. */
export interface LinkConference {
  type: 'linkConference';
  sessionId: string;
  port: MessagePort;
}

/**
 * Takes a member out: sent to the worker of its leg, which ends the mix there or the link
 * (whose closing takes it out of the mix on the other worker).
 */
export interface LeaveConference {
  type: 'leaveConference';
  sessionId: string;
}

/** Sent to the conference's worker. */
export interface UpdateConferenceMember {
  type: 'updateConferenceMember';
  sessionId: string;
  muted?: boolean;
  deaf?: boolean;
}

/**
 * Records the whole mix of a conference into a new mono WAV file until stopped or the
 * conference ends. `sessionId` is a member's, which finds the worker and the conference; the
 * recording outlives that member.
 */
export interface StartConferenceRecording {
  type: 'startConferenceRecording';
  sessionId: string;
  conferenceId: string;
  recording: RecordingSpec;
}

/** Stops one recording of a member's conference, or all of them when no id is given. */
export interface StopConferenceRecording {
  type: 'stopConferenceRecording';
  sessionId: string;
  conferenceId: string;
  recordingId?: string;
}

export type ConferenceCommand =
  | JoinConference
  | LinkConference
  | LeaveConference
  | UpdateConferenceMember
  | StartConferenceRecording
  | StopConferenceRecording;

export interface ConferenceResults {
  /** rate: what the conference mixes at now that the member is in; members: how many. */
  joinConference: { conferenceId: string; rate: number; members: number };
  /** rate: the leg's, which the conference's end of the link takes. */
  linkConference: { sessionId: string; rate: SampleRate };
  /** left is false when the session was in no conference. */
  leaveConference: { sessionId: string; left: boolean };
  updateConferenceMember: { sessionId: string; member: boolean };
  /** Resolves when the recording ends: failed when its file could not be written. */
  startConferenceRecording: RecordingOutcome;
  stopConferenceRecording: { stopped: number };
}
