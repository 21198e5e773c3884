import type { CallbackMethod } from '../../callbacks/signature.js';
import type { RecordingFormat } from '../recordings/recording-record.js';
import type { LiveRecording } from '../live-control.js';

/** A member of a conference as the Conference API shows it. */
export interface ConferenceMemberView {
  memberId: string;
  muted: boolean;
  deaf: boolean;
  from: string;
  to: string;
  callerName: string;
  direction: string;
  callUuid: string;
  /** Epoch ms the member joined. */
  joinedAt: number;
}

/** A conference going on, with the members in it. */
export interface ConferenceView {
  name: string;
  /** Epoch ms the room opened. */
  createdAt: number;
  members: ConferenceMemberView[];
}

/** What the Conference API does to members (Member/{member_id}/...). */
export type MemberAction =
  | { kind: 'hangup' }
  | { kind: 'kick' }
  | { kind: 'flags'; muted?: boolean; deaf?: boolean }
  | { kind: 'play'; url: string }
  | { kind: 'speak'; text: string; voice: 'MAN' | 'WOMAN'; language: string }
  | { kind: 'stop'; what: 'play' | 'speak' };

/** The Conference Record API's request (checked by the route before it gets here). */
export interface ConferenceRecordingRequest {
  format: RecordingFormat;
  callback: { url: string; method: CallbackMethod } | null;
  apiId: string;
}

/**
 * What the Conference API does to an account's conference rooms, wherever they live: list and
 * show them, hang them up, act on their members, record them. Every answer is plain data, so a
 * room on another node of the gateway answers the same way (src/cluster). A room that is not
 * going on (none of that name, or another account's) is null or false; a member not in the
 * room is a 404 naming it.
 */
export interface ConferenceControl {
  /** The names of the account's conferences going on. */
  list(authId: string): Promise<string[]>;
  get(authId: string, name: string): Promise<ConferenceView | null>;
  /** Ends a conference: every member's call is hung up. */
  hangup(authId: string, name: string): Promise<boolean>;
  /** Ends every conference of the account; how many. */
  hangupAll(authId: string): Promise<number>;
  /** Acts on members: `all`, or member ids separated by commas, each of which must be in it. */
  onMembers(authId: string, name: string, members: string, action: MemberAction): Promise<boolean>;
  /** Starts recording the room's mix (409 when it has not started or cannot be recorded). */
  record(
    authId: string,
    name: string,
    request: ConferenceRecordingRequest,
  ): Promise<LiveRecording | null>;
  /** Stops the room's recordings. */
  stopRecording(authId: string, name: string): Promise<boolean>;
}
