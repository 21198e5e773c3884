import type { Scheduler } from '../../core/scheduler.js';
import type { Call } from '../call.js';
import type { CallRecordings } from '../recordings/call-recordings.js';
import { hangupCause } from '../hangup-causes.js';
import type { ConferenceInstruction } from '../xml/conference-instruction.js';
import { roomSound, WAIT_TAG, waitSound } from './conference-sounds.js';
import { RoomRecordings } from './conference-recording.js';
import { ConferenceMember, ConferenceRoom, type ExitReason } from './conference-room.js';
import { localRoomClaims, type RoomClaims } from './room-claims.js';
import { RoomMixing, type ConferenceMedia } from './room-mixing.js';

export interface ConferenceRoomsOptions {
  media: ConferenceMedia;
  scheduler: Scheduler;
  /** Where rooms live among the gateway's nodes (none: this node alone). */
  claims?: RoomClaims;
  log: { info(object: object, message: string): void; warn(object: object, message: string): void };
  /** Where rooms' recordings go (as calls' do); none: rooms are not recorded. */
  recordings?: CallRecordings;
}

/**
 * What a member joining was refused for; the document goes on to its next element. `full`:
 * maxMembers are in; `elsewhere`: the room is open on another node of the gateway.
 */
export type JoinRefusal = 'full' | 'elsewhere';

/**
 * The conference rooms of this node, by account and name: members join through the answer
 * XML's Conference (join resolves when they leave, with the action parameters), and the
 * Conference API finds and steers them here.
 */
export class ConferenceRooms {
  private readonly rooms = new Map<string, ConferenceRoom>();
  /** Each room's claim among the nodes: the node holding it when another does, else null. */
  private readonly claimed = new WeakMap<ConferenceRoom, Promise<string | null>>();
  private nextMemberId = 0;
  private claims: RoomClaims;
  /** The rooms' mixes in the media workers. */
  private readonly mixing: RoomMixing;
  /** The rooms' recordings (the element's record, the Conference Record API). */
  readonly recordings: RoomRecordings | null;

  constructor(private readonly options: ConferenceRoomsOptions) {
    this.claims = options.claims ?? localRoomClaims;
    this.recordings = options.recordings
      ? new RoomRecordings(options.recordings, options.media)
      : null;
    this.mixing = new RoomMixing(options.media, options.log, () => this.rooms.values());
  }

  /** Rooms are claimed among the gateway's nodes from now on (the cluster starts later). */
  useClaims(claims: RoomClaims): void {
    this.claims = claims;
  }

  /** The rooms an account has now. */
  list(authId: string): ConferenceRoom[] {
    return [...this.rooms.values()].filter((room) => room.authId === authId);
  }

  find(authId: string, name: string): ConferenceRoom | null {
    return this.rooms.get(keyOf(authId, name)) ?? null;
  }

  /** Ends a room: every member's call is hung up. */
  hangupRoom(room: ConferenceRoom): void {
    this.close(room);
    for (const member of room.present()) void this.hangupMember(member);
  }

  hangupMember(member: ConferenceMember): Promise<void> {
    return member.call.hangup({
      cause: hangupCause('Normal Hangup'),
      source: 'API Request',
      status: 'completed',
    });
  }

  /** Mutes or deafens a member. */
  setFlags(member: ConferenceMember, flags: { muted?: boolean; deaf?: boolean }): Promise<void> {
    return this.mixing.setFlags(member, flags);
  }

  /**
   * Runs one member's time in a room. Resolves with the action parameters once the member has
   * left, or with the refusal when the member could not join.
   */
  async join(
    call: Call,
    instruction: ConferenceInstruction,
  ): Promise<Record<string, string> | { refused: JoinRefusal }> {
    const authId = call.init.owner.authId;
    const key = keyOf(authId, instruction.name);
    let room = this.rooms.get(key);
    if (!room) {
      room = new ConferenceRoom(authId, instruction.name, this.options.scheduler.now());
      this.rooms.set(key, room);
      this.claimed.set(room, this.claim(room));
    }
    const elsewhere = await this.claimed.get(room)!;
    if (elsewhere !== null) {
      call.log('the conference is open on another gateway node; the document goes on', {
        conference: room.name,
        node: elsewhere,
      });
      return { refused: 'elsewhere' };
    }
    // It closed while its claim was being made: a new one opens.
    if (this.rooms.get(key) !== room) return this.join(call, instruction);
    const refusal = this.refusal(room, call, instruction);
    if (refusal) return { refused: refusal };
    const member = new ConferenceMember(
      String(++this.nextMemberId),
      call,
      instruction,
      this.options.scheduler.now(),
    );
    room.members.set(member.id, member);
    call.conferenceUuid = room.uuid;
    this.event(room, member, 'enter');
    if (instruction.startConferenceOnEnter) room.started = true;
    const joining = room.started ? room.present().filter((m) => !m.mixed) : [member];
    if (room.started) await Promise.all(joining.map((m) => this.mixing.mix(room, m)));
    if (room.started) this.recordings?.recordIfAsked(room);
    if (!member.mixed) void waitSound(member, this.options.scheduler);
    roomSound(room, member, instruction.enterSound, this.options.scheduler);
    const stop = this.watch(room, member);
    const reason = await member.left;
    stop();
    await this.part(room, member, reason);
    return {
      ConferenceName: room.name,
      ConferenceUUID: room.uuid,
      ConferenceMemberID: member.id,
    };
  }

  private refusal(
    room: ConferenceRoom,
    call: Call,
    instruction: ConferenceInstruction,
  ): JoinRefusal | null {
    if (room.present().length >= instruction.maxMembers) {
      call.log('the conference is full; the document goes on', {
        conference: room.name,
        maxMembers: instruction.maxMembers,
      });
      return 'full';
    }
    return null;
  }

  /**
   * Hangs up, kicks on *, ends at timeLimit, reports digitsMatch, relays digits and reports the
   * member taking the floor.
   */
  private watch(room: ConferenceRoom, member: ConferenceMember): () => void {
    const { settings, call } = member;
    void call.leg.ended.then(() => member.leave('hangup'));
    call.onConferenceFloor = () => this.floor(room, member);
    const limit =
      settings.timeLimit > 0
        ? this.options.scheduler.after(settings.timeLimit * 1000, () => member.leave('time-limit'))
        : null;
    let typed = '';
    const stopDigits = call.onDigit((digit, via) => {
      if (settings.hangupOnStar && digit === '*') return member.leave('kicked');
      // Tones in the audio reach the others as audio; events are sent on to them.
      if (settings.relayDTMF && via !== 'inband') {
        for (const other of room.present()) {
          if (other !== member && other.mixed && !other.deaf) void other.call.sendDigits(digit);
        }
      }
      if (settings.digitsMatch.length === 0) return;
      typed = (typed + digit).slice(-32);
      const match = settings.digitsMatch.find((pattern) => typed.endsWith(pattern));
      if (!match) return;
      typed = '';
      this.event(room, member, 'digits', { ConferenceDigitsMatch: match });
    });
    return () => {
      limit?.cancel();
      stopDigits();
      call.onConferenceFloor = null;
    };
  }

  /** The member leaves the room, the mix, and perhaps ends the conference for the others. */
  private async part(room: ConferenceRoom, member: ConferenceMember, reason: ExitReason) {
    const { call } = member;
    room.members.delete(member.id);
    if (!call.over) {
      if (member.mixed) {
        await this.mixing.leave(member);
      } else await call.leg.stopPlayback(WAIT_TAG);
    }
    this.options.log.info(
      { callUuid: call.uuid, conference: room.name, memberId: member.id, reason },
      'conference member left',
    );
    this.event(room, member, 'exit');
    roomSound(room, member, member.settings.exitSound, this.options.scheduler);
    const remaining = room.present();
    if (member.settings.endConferenceOnExit) {
      this.close(room);
      room.end();
    } else if (remaining.length === 1 && !remaining[0]!.settings.stayAlone) {
      remaining[0]!.leave('ended');
    }
    if (room.members.size === 0) this.close(room);
  }

  /**
   * Claims a new room among the nodes. Resolves to the node holding it when another does (the
   * room is then taken off the books), else null. With the store away the room opens here
   * unclaimed, as calls go on without it; the cluster's claims make the claim once Redis
   * answers again (ConferenceClaims.renew).
   */
  private async claim(room: ConferenceRoom): Promise<string | null> {
    try {
      const claim = await this.claims.claim(room.authId, room.name, room.uuid);
      if (claim.held) return null;
      this.close(room, false);
      return claim.node;
    } catch (error) {
      this.options.log.warn(
        { err: error, conference: room.name },
        'the conference room could not be claimed among the nodes; it opens here, claimed once the store answers',
      );
      return null;
    }
  }

  /** Takes a room off the books: a member joining its name from now on opens a new one. */
  private close(room: ConferenceRoom, release = true): void {
    const key = keyOf(room.authId, room.name);
    if (this.rooms.get(key) !== room) return;
    this.rooms.delete(key);
    if (!release) return;
    this.claims
      .release(room.authId, room.name, room.uuid)
      .catch((error: Error) =>
        this.options.log.warn(
          { err: error, conference: room.name },
          'the conference room claim was not released; it lapses by itself',
        ),
      );
  }

  /**
   * `holder` took the floor (the mixing worker's rule, docs/calls-and-media.md): each member
   * whose element had floorEvent is told, with the holder's parameters.
   */
  private floor(room: ConferenceRoom, holder: ConferenceMember): void {
    if (!holder.present) return;
    for (const member of room.present()) {
      if (member.settings.floorEvent) this.event(room, holder, 'floor', {}, member);
    }
  }

  /**
   * callbackUrl's events about `member` (enter, exit, digits, floor), to the callbackUrl of
   * `to` (the member itself, but for floor), signed as every callback is.
   */
  private event(
    room: ConferenceRoom,
    member: ConferenceMember,
    action: 'enter' | 'exit' | 'digits' | 'floor',
    extra: Record<string, string> = {},
    to: ConferenceMember = member,
  ): void {
    const { callbackUrl, callbackMethod } = to.settings;
    if (callbackUrl === null) return;
    to.call.notify(callbackUrl, callbackMethod, {
      ...member.call.requestParams(),
      ConferenceName: room.name,
      ConferenceUUID: room.uuid,
      ConferenceMemberID: member.id,
      ConferenceAction: action,
      ...extra,
    });
  }
}

const keyOf = (authId: string, name: string): string => `${authId}\u0000${name}`;
