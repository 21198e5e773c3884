import { MessageChannel, type Transferable } from 'node:worker_threads';
import type { SessionCommand } from '../../media/worker/media-worker-pool.js';
import type { Results } from '../../media/worker/protocol.js';
import { WAIT_TAG } from './conference-sounds.js';
import type { ConferenceMember, ConferenceRoom } from './conference-room.js';

/** What the rooms need from the media plane. */
export interface ConferenceMedia {
  /** To the worker of the session the command names. */
  send<C extends SessionCommand>(
    command: C,
    transfer?: readonly Transferable[],
  ): Promise<Results[C['type']]>;
  /** To the worker of a thread (the one mixing a room). */
  sendToThread<C extends SessionCommand>(
    threadId: number,
    command: C,
    transfer?: readonly Transferable[],
  ): Promise<Results[C['type']]>;
  workerOf(sessionId: string): number | null;
  /** Hears the thread id of each worker that crashed, once its sessions are ended. */
  onWorkerCrash?(listener: (threadId: number) => void): void;
}

/**
 * The rooms' mixes in the media workers: a room is mixed on one worker, the one its first
 * member in the mix runs on; a member whose leg runs on another worker is linked to it. When
 * that worker crashes, the room's members on other workers are mixed again.
 */
export class RoomMixing {
  constructor(
    private readonly media: ConferenceMedia,
    private readonly log: { warn(object: object, message: string): void },
    /** The rooms open now, looked through when a worker crashes. */
    rooms: () => Iterable<ConferenceRoom>,
  ) {
    media.onWorkerCrash?.((threadId) => {
      for (const room of rooms()) if (room.worker === threadId) this.mixerLost(room);
    });
  }

  /**
   * Puts a member into the room's mix, its wait sound stopped. The first member in the mix
   * picks the worker that mixes (its own); a member whose leg runs on another worker is linked
   * to it (see enterMix).
   */
  async mix(room: ConferenceRoom, member: ConferenceMember): Promise<void> {
    if (member.mixed || member.call.over) return;
    if (!room.present().some((m) => m.mixed)) {
      room.worker = this.media.workerOf(member.sessionId);
    }
    member.mixed = true;
    member.mixedOn = room.worker;
    await member.call.leg.stopPlayback(WAIT_TAG);
    await this.enterMix(member).catch((error: Error) => {
      member.mixed = false;
      member.mixedOn = null;
      member.call.log('the member could not join the mix', { reason: error.message });
      member.leave('ended');
    });
  }

  /** Takes a member whose call goes on out of the mix. */
  async leave(member: ConferenceMember): Promise<void> {
    await this.media
      .send({ type: 'leaveConference', sessionId: member.sessionId })
      .catch(() => undefined);
  }

  /** Mutes or deafens a member (its flags set), in the mix when it is in one. */
  async setFlags(member: ConferenceMember, flags: { muted?: boolean; deaf?: boolean }) {
    if (flags.muted !== undefined) member.muted = flags.muted;
    if (flags.deaf !== undefined) member.deaf = flags.deaf;
    if (!member.mixed || member.mixedOn === null) return;
    await this.media
      .sendToThread(member.mixedOn, {
        type: 'updateConferenceMember',
        sessionId: member.sessionId,
        ...flags,
      })
      .catch(() => undefined);
  }

  /**
   * The worker mixing the room crashed: its own members' calls ended with it, and the room's
   * members on other workers are mixed again, on the first one's worker (their links to the
   * dead mixer closed with it). What they hear stops for the moment this takes.
   */
  private mixerLost(room: ConferenceRoom): void {
    room.worker = null;
    const survivors = room
      .present()
      .filter((m) => m.mixed && !m.call.over && this.media.workerOf(m.sessionId) !== null);
    for (const member of room.present()) {
      member.mixed = false;
      member.mixedOn = null;
    }
    this.log.warn(
      { conference: room.name, members: survivors.length },
      'the media worker mixing the conference crashed; its members on other workers are mixed again',
    );
    void (async () => {
      for (const member of survivors) await this.mix(room, member);
    })();
  }

  /**
   * Joins the mix on the room's worker. A leg on another worker is linked to it over a
   * MessageChannel between the two workers (one port to each): its frames go to the mix as
   * they are heard and the mix comes back to be played at its next tick, which adds up to one
   * tick (20 ms) each way, as the two workers' clocks fall (docs/calls-and-media.md).
   */
  private async enterMix(member: ConferenceMember): Promise<void> {
    const { media } = this;
    const { sessionId } = member;
    const join = {
      type: 'joinConference',
      sessionId,
      conferenceId: member.call.conferenceUuid!,
      muted: member.muted,
      deaf: member.deaf,
    } as const;
    const worker = media.workerOf(sessionId);
    const roomWorker = member.mixedOn;
    if (roomWorker === null || worker === roomWorker) {
      await media.send(join);
      return;
    }
    const { port1, port2 } = new MessageChannel();
    try {
      const { rate } = await media.send({ type: 'linkConference', sessionId, port: port1 }, [
        port1,
      ]);
      await media.sendToThread(roomWorker, { ...join, link: { port: port2, rate } }, [port2]);
    } catch (error) {
      // The link's other end sees the port close, and ends.
      port2.close();
      throw error;
    }
  }
}
