import type { RecordingOutcome, RecordingSpec } from '../recording/recording-spec.js';

/**
 * The media worker's conference commands (part of the worker protocol, protocol.ts). A
 * conference lives on one worker; the call layer puts every member there.
 */
export interface JoinConference {
  type: 'joinConference';
  sessionId: string;
  conferenceId: string;
  muted: boolean;
  deaf: boolean;
}

export interface LeaveConference {
  type: 'leaveConference';
  sessionId: string;
}

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
  | LeaveConference
  | UpdateConferenceMember
  | StartConferenceRecording
  | StopConferenceRecording;

export interface ConferenceResults {
  /** rate: what the conference mixes at now that the member is in; members: how many. */
  joinConference: { conferenceId: string; rate: number; members: number };
  /** left is false when the session was in no conference. */
  leaveConference: { sessionId: string; left: boolean };
  updateConferenceMember: { sessionId: string; member: boolean };
  /** Resolves when the recording ends: failed when its file could not be written. */
  startConferenceRecording: RecordingOutcome;
  stopConferenceRecording: { stopped: number };
}
