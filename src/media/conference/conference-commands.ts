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

export type ConferenceCommand = JoinConference | LeaveConference | UpdateConferenceMember;

export interface ConferenceResults {
  /** rate: what the conference mixes at now that the member is in; members: how many. */
  joinConference: { conferenceId: string; rate: number; members: number };
  /** left is false when the session was in no conference. */
  leaveConference: { sessionId: string; left: boolean };
  updateConferenceMember: { sessionId: string; member: boolean };
}
