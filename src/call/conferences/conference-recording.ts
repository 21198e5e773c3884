import type { CallbackMethod } from '../../callbacks/signature.js';
import type { SessionCommand } from '../../media/worker/media-worker-pool.js';
import type { Results } from '../../media/worker/protocol.js';
import {
  CallRecordings,
  type RecordingResult,
  type StartedRecording,
} from '../recordings/call-recordings.js';
import { recordingCallbackParams } from '../recordings/recording-callback.js';
import type { RecordingFormat } from '../recordings/recording-record.js';
import type { ConferenceMember, ConferenceRoom } from './conference-room.js';

/** What the conference recordings need from the media plane. */
export interface RecordingMedia {
  send<C extends SessionCommand>(command: C): Promise<Results[C['type']]>;
  /** To one worker by its thread id: the room's mixing worker. */
  sendToThread<C extends SessionCommand>(threadId: number, command: C): Promise<Results[C['type']]>;
}

export interface RoomRecordingRequest {
  format: RecordingFormat;
  /** Told once the file is stored (or failed), signed as every callback is. */
  callback: { url: string; method: CallbackMethod } | null;
  /** `api`: the Conference Record API's parameter names; `xml`: the Conference element's. */
  style: 'api' | 'xml';
  /** The request's api_id, sent back on an API-style callback. */
  apiId?: string;
}

/**
 * The recordings of conference rooms: the mix of every member, written by the media worker
 * that mixes the room and stored as call recordings are (the same spool, media store, record
 * and URL), through a CallRecordings whose "call" is the room: its uuid is the room's, and its
 * worker commands are the conference's, sent through a member in the mix. The record then says
 * `recording_type` conference and names the room.
 */
export class RoomRecordings {
  private readonly service: CallRecordings;
  /** Rooms being recorded, by uuid, for the commands sent through their members. */
  private readonly rooms = new Map<string, { room: ConferenceRoom; running: number }>();

  constructor(
    private readonly calls: CallRecordings,
    private readonly media: RecordingMedia,
  ) {
    this.service = new CallRecordings({ ...calls.options, media: { send: this.viaRoom } });
  }

  /** Whether a recording of the room runs. */
  recording(room: ConferenceRoom): boolean {
    return (this.rooms.get(room.uuid)?.running ?? 0) > 0;
  }

  /**
   * Starts recording a room until stopped or the conference ends; throws when no member is in
   * the mix yet (the room has not started).
   */
  async start(room: ConferenceRoom, request: RoomRecordingRequest): Promise<StartedRecording> {
    if (!mixedMember(room)) throw new Error(`conference ${room.name} has not started`);
    const entry = this.rooms.get(room.uuid) ?? { room, running: 0 };
    entry.running++;
    this.rooms.set(room.uuid, entry);
    const owner = ownerOf(room);
    const started = await this.service
      .start(
        { uuid: room.uuid, sessionId: room.uuid, from: '', to: '', owner },
        { format: request.format, channels: 1, callback: null, conference: room.name },
      )
      .catch((error: Error) => {
        this.done(room);
        throw error;
      });
    const ended = started.ended.then(async (result) => {
      this.done(room);
      // A room's recordings are not billed to a call: their tally is let go, not kept.
      void this.service.recordedOn(room.uuid, 0);
      this.report(room, request, result);
      return result;
    });
    return { ...started, ended };
  }

  /**
   * The Conference element's record: once a member who asked for it is in the mix, the room is
   * recorded (once) from when two members are in the mix, or from the first with
   * recordWhenAlone, until the conference ends.
   */
  recordIfAsked(room: ConferenceRoom): void {
    const mixed = room.present().filter((m) => m.mixed);
    const asking = mixed.find((m) => m.settings.record);
    if (!asking || this.recording(room) || room.recordedByElement) return;
    if (mixed.length < 2 && !asking.settings.recordWhenAlone) return;
    room.recordedByElement = true;
    const { callbackUrl, callbackMethod, recordFileFormat } = asking.settings;
    const callback = callbackUrl ? { url: callbackUrl, method: callbackMethod } : null;
    this.start(room, { format: recordFileFormat, callback, style: 'xml' }).catch((error: Error) =>
      asking.call.log('the conference could not be recorded', { reason: error.message }),
    );
  }

  /** Stops the room's recordings: how many it stopped (each is stored and told as usual). */
  stop(room: ConferenceRoom): Promise<number> {
    return this.service.stop(room.uuid);
  }

  private done(room: ConferenceRoom): void {
    const entry = this.rooms.get(room.uuid);
    if (entry && --entry.running === 0) this.rooms.delete(room.uuid);
  }

  /**
   * The recordings' worker commands, as the room's: sent, in the name of a member in the mix,
   * to the worker that mixes the room (the member's own, unless it is linked from another).
   */
  private readonly viaRoom = <C extends SessionCommand>(command: C) => {
    const room = this.rooms.get(command.sessionId)?.room;
    const member = room && mixedMember(room);
    const toMixer = <D extends SessionCommand>(sent: D): Promise<Results[D['type']]> =>
      member?.mixedOn != null
        ? this.media.sendToThread(member.mixedOn, sent)
        : this.media.send(sent);
    if (command.type === 'startRecording' && member) {
      return toMixer({
        type: 'startConferenceRecording',
        sessionId: member.sessionId,
        conferenceId: room.uuid,
        recording: command.recording,
      }) as Promise<Results[C['type']]>;
    }
    if (command.type === 'stopRecording') {
      if (!member) return Promise.resolve({ stopped: 0 } as Results[C['type']]);
      return toMixer({
        type: 'stopConferenceRecording',
        sessionId: member.sessionId,
        conferenceId: room.uuid,
        ...(command.recordingId !== undefined && { recordingId: command.recordingId }),
      }) as Promise<Results[C['type']]>;
    }
    return Promise.reject(new Error(`the conference ${room?.name ?? ''} has no member in the mix`));
  };

  /** The callback: the recording's parameters with the room's, signed as every callback is. */
  private report(room: ConferenceRoom, request: RoomRecordingRequest, result: RecordingResult) {
    if (!request.callback) return;
    // The room's uuid is the recording's "call": told as ConferenceUUID, not as a call's.
    const params = recordingCallbackParams(request.style, result, request.apiId);
    delete params[request.style === 'xml' ? 'CallUUID' : 'call_uuid'];
    const about: Record<string, string> =
      request.style === 'xml'
        ? { ConferenceName: room.name, ConferenceUUID: room.uuid, ConferenceAction: 'record' }
        : { conference_name: room.name, conference_uuid: room.uuid };
    this.calls.options.callbacks
      .send({ ...request.callback, accountId: room.authId, params: { ...about, ...params } })
      .catch((error: Error) =>
        this.calls.options.log.warn(
          { recordingId: result.recordingId, reason: error.message },
          'recording callback failed',
        ),
      );
  }
}

function mixedMember(room: ConferenceRoom): ConferenceMember | undefined {
  return room.present().find((m) => m.mixed && !m.call.over);
}

/** The room's owner, as its recordings are filed: the account of a member's call. */
function ownerOf(room: ConferenceRoom) {
  return mixedMember(room)!.call.init.owner;
}
