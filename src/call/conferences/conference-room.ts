import { randomUUID } from 'node:crypto';
import type { Call } from '../call.js';
import type { ConferenceInstruction } from '../xml/conference-instruction.js';

/** Why a member left: the member's document goes on unless the call itself is over. */
export type ExitReason =
  /** Kick from the API, or * with hangupOnStar. */
  | 'kicked'
  /** The conference ended (endConferenceOnExit, stayAlone, an API hangup of the room). */
  | 'ended'
  /** The member's timeLimit ran out. */
  | 'time-limit'
  /** The member's call ended (hung up by the caller or through the API). */
  | 'hangup';

/** One call in a conference, as the Conference API shows and steers it. */
export class ConferenceMember {
  muted: boolean;
  deaf = false;
  /** In the worker's mix (the conference has started); waiting members hear the wait sound. */
  mixed = false;
  /** The thread of the worker whose mix it is in (its leg's, or linked to it from its leg's). */
  mixedOn: number | null = null;
  readonly left: Promise<ExitReason>;
  private resolveLeft!: (reason: ExitReason) => void;
  private gone = false;

  constructor(
    readonly id: string,
    readonly call: Call,
    readonly settings: ConferenceInstruction,
    readonly joinedAt: number,
  ) {
    this.muted = settings.muted;
    this.left = new Promise((resolve) => (this.resolveLeft = resolve));
  }

  get sessionId(): string {
    return this.call.leg.uuid;
  }

  get present(): boolean {
    return !this.gone;
  }

  /** Ends the member's time in the room (once; later reasons are ignored). */
  leave(reason: ExitReason): void {
    if (this.gone) return;
    this.gone = true;
    this.resolveLeft(reason);
  }
}

/**
 * A conference room on this node: its members by member id, whether it has started (a member
 * with startConferenceOnEnter came in), and the media worker that mixes it.
 */
export class ConferenceRoom {
  readonly uuid = randomUUID();
  readonly members = new Map<string, ConferenceMember>();
  started = false;
  /** The thread of the worker that mixes it, set by the first member in its mix. */
  worker: number | null = null;
  /** Whether a member's Conference element (record) has had the room recorded. */
  recordedByElement = false;

  constructor(
    /** The auth id the room belongs to (rooms are an account's own). */
    readonly authId: string,
    readonly name: string,
    readonly createdAt: number,
  ) {}

  /** Members still in the room. */
  present(): ConferenceMember[] {
    return [...this.members.values()].filter((m) => m.present);
  }

  /** Every member leaves: the conference is over. */
  end(): void {
    for (const member of this.members.values()) member.leave('ended');
  }
}
