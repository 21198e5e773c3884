import { conflict, notFound } from '../../core/errors.js';
import type { LiveRecording } from '../live-control.js';
import type {
  ConferenceControl,
  ConferenceRecordingRequest,
  ConferenceView,
  MemberAction,
} from './conference-control.js';
import type { ConferenceMember, ConferenceRoom } from './conference-room.js';
import type { ConferenceRooms } from './conference-rooms.js';

/** Playback tags of the API's Play and Speak, so that their DELETE stops them alone. */
const TAGS = { play: 'conference-member-play', speak: 'conference-member-speak' } as const;

/** The conference rooms of this node (ConferenceControl on ConferenceRooms). */
export class LiveConferences implements ConferenceControl {
  constructor(private readonly rooms: ConferenceRooms) {}

  async list(authId: string): Promise<string[]> {
    return this.rooms
      .list(authId)
      .filter((room) => room.present().length > 0)
      .map((room) => room.name);
  }

  async get(authId: string, name: string): Promise<ConferenceView | null> {
    const room = this.room(authId, name);
    if (!room) return null;
    return {
      name: room.name,
      createdAt: room.createdAt,
      members: room.present().map((m) => ({
        memberId: m.id,
        muted: m.muted,
        deaf: m.deaf,
        from: m.call.init.from,
        to: m.call.init.to,
        callerName: m.call.init.callerName ?? '',
        direction: m.call.direction,
        callUuid: m.call.uuid,
        joinedAt: m.joinedAt,
      })),
    };
  }

  async hangup(authId: string, name: string): Promise<boolean> {
    const room = this.room(authId, name);
    if (room) this.rooms.hangupRoom(room);
    return room !== null;
  }

  async hangupAll(authId: string): Promise<number> {
    const all = this.rooms.list(authId);
    for (const room of all) this.rooms.hangupRoom(room);
    return all.length;
  }

  async onMembers(
    authId: string,
    name: string,
    ids: string,
    action: MemberAction,
  ): Promise<boolean> {
    const room = this.room(authId, name);
    if (!room) return false;
    const chosen = membersOf(room, ids);
    await Promise.all(chosen.map((member) => this.act(member, action)));
    return true;
  }

  async record(
    authId: string,
    name: string,
    request: ConferenceRecordingRequest,
  ): Promise<LiveRecording | null> {
    const room = this.room(authId, name);
    if (!room) return null;
    const { recordings } = this.rooms;
    if (!recordings) throw conflict('this gateway does not record conferences');
    const started = await recordings
      .start(room, { ...request, style: 'api' })
      .catch((error: Error) => {
        throw conflict(`conference ${room.name} cannot be recorded now: ${error.message}`);
      });
    return { recordingId: started.recordingId, url: started.url };
  }

  async stopRecording(authId: string, name: string): Promise<boolean> {
    const room = this.room(authId, name);
    if (!room) return false;
    await this.rooms.recordings?.stop(room);
    return true;
  }

  /** What the API asks of one member; play and speech are started, not waited for. */
  private async act(member: ConferenceMember, action: MemberAction): Promise<void> {
    const { leg } = member.call;
    switch (action.kind) {
      case 'hangup':
        void this.rooms.hangupMember(member);
        return;
      case 'kick':
        member.leave('kicked');
        return;
      case 'flags':
        await this.rooms.setFlags(member, {
          ...(action.muted !== undefined && { muted: action.muted }),
          ...(action.deaf !== undefined && { deaf: action.deaf }),
        });
        return;
      case 'play':
        void leg.play({ kind: 'file', url: action.url }, { tag: TAGS.play }).catch(() => false);
        return;
      case 'speak': {
        const { text, voice, language } = action;
        const source = { kind: 'speech', text, voice, language } as const;
        void leg.play(source, { tag: TAGS.speak }).catch(() => false);
        return;
      }
      case 'stop':
        await leg.stopPlayback(TAGS[action.what]);
    }
  }

  /** The account's room of that name, when it has members. */
  private room(authId: string, name: string): ConferenceRoom | null {
    const found = this.rooms.find(authId, name);
    return found && found.present().length > 0 ? found : null;
  }
}

/** `all`, or member ids separated by commas: each must be in the room. */
function membersOf(room: ConferenceRoom, ids: string): ConferenceMember[] {
  const present = room.present();
  if (ids === 'all') return present;
  return ids.split(',').map((id) => {
    const member = present.find((m) => m.id === id.trim());
    if (!member) throw notFound(`member ${id.trim()} of conference ${room.name}`);
    return member;
  });
}
