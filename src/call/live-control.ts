import type { CallConversion } from '../state/records.js';
import type { Call } from './call.js';
import type { CallOwner } from './call-launcher.js';
import type { CallEngine, LiveCall } from './call-engine.js';
import {
  liveCallView,
  matchesLiveFilters,
  type LiveCallFilters,
  type LiveCallView,
} from './live-call-view.js';
import { hangupCause } from './hangup-causes.js';
import type { CallLeg } from './legs/call-leg.js';
import type { LegEnd } from './legs/leg-end.js';
import type { RecordingRequest } from './recordings/call-recordings.js';
import type { StreamRequest } from './streams/stream-request.js';

/** What an action on a live call came to; `not-connected`: a leg it needs carries no audio yet. */
export type LiveAction = 'done' | 'not-found' | 'no-b-leg' | 'not-connected';

/** What speech started over the API plays as, so that DELETE .../Speak/ stops it alone. */
const API_SPEECH = 'api-speech';

/**
 * How a client's request ends a call (DELETE Call/ or Request/): once answered it is hung up
 * (4000 Normal Hangup, completed); before, it is cancelled (1000 Canceled, no-answer).
 */
function endByApi(call: Call): LegEnd {
  return call.answered
    ? { cause: hangupCause('Normal Hangup'), source: 'API Request', status: 'completed' }
    : { cause: hangupCause('Canceled'), source: 'API Request', status: 'no-answer' };
}

/** A leg that carries audio now: answered, or in early media. */
const carriesAudio = (leg: CallLeg): boolean => leg.state === 'answered' || leg.state === 'early';

export interface LiveSpeech {
  legs?: 'aleg' | 'bleg' | 'both';
  text: string;
  voice: 'MAN' | 'WOMAN';
  language: string;
  loop: boolean;
  mix: boolean;
}

/** A recording started on a live call: its id and the URL its file will be at. */
export interface LiveRecording {
  recordingId: string;
  url: string;
}

/** `live`: dialled calls not over yet (ringing or answered); `queued`: not dialled yet. */
export type CallView = 'live' | 'queued';

/**
 * What the API does to calls in progress, wherever they run: list and show them, hang up or
 * cancel them, speak and send digits into them, fork their audio, note a conversion. Every
 * answer is plain data, so a call on another node answers the same way (src/cluster).
 */
export interface CallControl {
  /** The calls of one view the viewer sees, oldest first. */
  list(viewer: CallOwner, view: CallView, filters?: LiveCallFilters): Promise<LiveCallView[]>;
  /** One call of a view; null when the viewer has no such call in that view. */
  get(viewer: CallOwner, view: CallView, uuid: string): Promise<LiveCallView | null>;
  /** Ends a live call (DELETE Call/{uuid}/); false when there is none of that uuid. */
  hangup(viewer: CallOwner, uuid: string): Promise<boolean>;
  /** Ends every live call the viewer sees (DELETE Call/); how many. */
  hangupAll(viewer: CallOwner): Promise<number>;
  /** Cancels what is left of a request (DELETE Request/{uuid}/); how many calls it still had. */
  cancelRequest(viewer: CallOwner, requestUuid: string): Promise<number>;
  speak(viewer: CallOwner, uuid: string, speech: LiveSpeech): Promise<LiveAction>;
  stopSpeaking(viewer: CallOwner, uuid: string): Promise<LiveAction>;
  sendDigits(
    viewer: CallOwner,
    uuid: string,
    digits: string,
    leg?: 'aleg' | 'bleg',
  ): Promise<LiveAction>;
  startStream(
    viewer: CallOwner,
    uuid: string,
    request: StreamRequest,
  ): Promise<{ streamId: string } | null | 'not-connected'>;
  stopStream(viewer: CallOwner, uuid: string, streamId: string): Promise<boolean>;
  stopStreams(viewer: CallOwner, uuid: string): Promise<number | null>;
  /**
   * Records a live call (POST Call/{uuid}/Record/); null when the viewer has no such live call.
   * The recording is stored, and its callback sent, by the node that runs the call.
   */
  record(
    viewer: CallOwner,
    uuid: string,
    request: RecordingRequest,
  ): Promise<LiveRecording | null | 'not-connected'>;
  /**
   * Stops a call's recordings (DELETE .../Record/): the one at `url`, or all (no url: null
   * once it crossed the bus, as JSON has no undefined); how many. Null when the viewer has no
   * such call.
   */
  stopRecording(viewer: CallOwner, uuid: string, url?: string | null): Promise<number | null>;
  /**
   * Keeps a conversion with a live call, whose record takes it when it ends: `live`. When the
   * call is not live (or ends meanwhile, its record written) `not-live`: the record is the
   * caller's to update.
   */
  convert(
    viewer: CallOwner,
    uuid: string,
    conversion: CallConversion,
  ): Promise<'live' | 'not-live'>;
}

/**
 * The calls of this node (CallControl on the engine's live calls). Every action goes through
 * the engine's view of them, so a viewer acts only on the calls it may see.
 */
export class LiveControl implements CallControl {
  constructor(
    private readonly engine: Pick<
      CallEngine,
      'find' | 'liveCalls' | 'queuedCalls' | 'callsOfRequest'
    >,
  ) {}

  async list(
    viewer: CallOwner,
    view: CallView,
    filters: LiveCallFilters = {},
  ): Promise<LiveCallView[]> {
    const entries =
      view === 'queued' ? this.engine.queuedCalls(viewer) : this.engine.liveCalls(viewer);
    return entries
      .filter((entry) => inView(entry, view))
      .map(liveCallView)
      .filter((call) => matchesLiveFilters(call, filters))
      .sort((a, b) => a.initiated - b.initiated);
  }

  async get(viewer: CallOwner, view: CallView, uuid: string): Promise<LiveCallView | null> {
    const entry = this.engine.find(viewer, uuid);
    return entry && inView(entry, view) ? liveCallView(entry) : null;
  }

  /**
   * Hangs a call up: true once it is over on this side (see endNow). A node asking for another's
   * call gets its answer within the control bus's wait even when the far end is slow.
   */
  async hangup(viewer: CallOwner, uuid: string): Promise<boolean> {
    const entry = this.engine.find(viewer, uuid);
    if (!entry || entry.call.over) return false;
    endNow(entry.call);
    return true;
  }

  async hangupAll(viewer: CallOwner): Promise<number> {
    const calls = this.engine.liveCalls(viewer);
    await Promise.all(calls.map((entry) => this.hangup(viewer, entry.call.uuid)));
    return calls.length;
  }

  /**
   * Speaks into a live call (POST Call/{uuid}/Speak/) on the legs asked for: the caller, the
   * party Dial connected (bleg), or both. Returns at once; the speech renders and plays on.
   */
  async speak(viewer: CallOwner, uuid: string, speech: LiveSpeech): Promise<LiveAction> {
    return this.onLegs(viewer, uuid, speech.legs ?? 'aleg', (leg, call) => {
      void leg
        .play(
          { kind: 'speech', text: speech.text, voice: speech.voice, language: speech.language },
          { loop: speech.loop, mix: speech.mix, tag: API_SPEECH },
        )
        .catch((error: Error) =>
          call.log('Speak on the live call failed', { reason: error.message }),
        );
    });
  }

  /**
   * Stops the speech started with speak() on every leg of a live call (DELETE .../Speak/); what
   * the answer XML plays goes on.
   */
  async stopSpeaking(viewer: CallOwner, uuid: string): Promise<LiveAction> {
    return this.onLegs(viewer, uuid, 'both', (leg) => void leg.stopPlayback(API_SPEECH), {
      needsAudio: false,
    });
  }

  /** Sends digits to a leg of a live call (POST Call/{uuid}/DTMF/). */
  async sendDigits(
    viewer: CallOwner,
    uuid: string,
    digits: string,
    leg: 'aleg' | 'bleg' = 'aleg',
  ): Promise<LiveAction> {
    return this.onLegs(viewer, uuid, leg, (target) => {
      void target.sendDigits(digits);
    });
  }

  /**
   * Forks a live call's audio to a WebSocket server (POST Call/{uuid}/Stream/); resolves with
   * the new stream's id once its record is stored (the socket connects afterwards, and the
   * status callback tells how that went). Null when the viewer has no such live call.
   */
  async startStream(
    viewer: CallOwner,
    uuid: string,
    request: StreamRequest,
  ): Promise<{ streamId: string } | null | 'not-connected'> {
    const entry = this.engine.find(viewer, uuid);
    if (!entry) return null;
    if (!carriesAudio(entry.call.leg)) return 'not-connected';
    return { streamId: await entry.call.streams.start(request, 'throw') };
  }

  /** Stops one stream of a live call; false when the call or a running stream is not found. */
  async stopStream(viewer: CallOwner, uuid: string, streamId: string): Promise<boolean> {
    const entry = this.engine.find(viewer, uuid);
    if (!entry) return false;
    return entry.call.streams.stop(streamId);
  }

  /** Stops every stream of a live call; null when there is no such live call. */
  async stopStreams(viewer: CallOwner, uuid: string): Promise<number | null> {
    const entry = this.engine.find(viewer, uuid);
    if (!entry) return null;
    return entry.call.streams.stopAll();
  }

  async record(
    viewer: CallOwner,
    uuid: string,
    request: RecordingRequest,
  ): Promise<LiveRecording | null | 'not-connected'> {
    const entry = this.engine.find(viewer, uuid);
    if (!entry || entry.call.over) return null;
    if (!carriesAudio(entry.call.leg)) return 'not-connected';
    const { recordingId, url } = await entry.call.record(request);
    return { recordingId, url };
  }

  async stopRecording(
    viewer: CallOwner,
    uuid: string,
    url?: string | null,
  ): Promise<number | null> {
    const entry = this.engine.find(viewer, uuid);
    if (!entry) return null;
    return entry.call.stopRecording(url ?? undefined);
  }

  /**
   * Acts on the legs asked for. Speech and digits need every one of them to carry audio: on a
   * call not answered yet (and not in early media) they would go nowhere, so nothing is done.
   */
  private onLegs(
    viewer: CallOwner,
    uuid: string,
    legs: 'aleg' | 'bleg' | 'both',
    act: (leg: CallLeg, call: Call) => void,
    { needsAudio = true } = {},
  ): LiveAction {
    const entry = this.engine.find(viewer, uuid);
    if (!entry) return 'not-found';
    const { call } = entry;
    const bLeg = call.bLeg;
    if (legs === 'bleg' && !bLeg) return 'no-b-leg';
    const targets: CallLeg[] = [];
    if (legs !== 'bleg') targets.push(call.leg);
    if (legs !== 'aleg' && bLeg) targets.push(bLeg);
    if (needsAudio && !targets.every(carriesAudio)) return 'not-connected';
    for (const leg of targets) act(leg, call);
    return 'done';
  }

  async cancelRequest(viewer: CallOwner, requestUuid: string): Promise<number> {
    const mine = this.engine
      .callsOfRequest(viewer, requestUuid)
      .filter((entry) => !entry.call.over);
    for (const entry of mine) endNow(entry.call);
    return mine.length;
  }

  async convert(
    viewer: CallOwner,
    uuid: string,
    conversion: CallConversion,
  ): Promise<'live' | 'not-live'> {
    const entry = this.engine.find(viewer, uuid);
    if (!entry) return 'not-live';
    entry.call.conversion = conversion;
    if (!entry.call.over) return 'live';
    // Ending: its record takes the conversion, or is written before this returns.
    await entry.call.finished;
    return 'not-live';
  }
}

/**
 * Ends a call for the API. The client is answered once the call is over on this side (its
 * BYE or CANCEL sent, its record and hangup callback on their way), not when the far end
 * answers: one that vanished would hold the request for the transaction's whole timeout.
 */
function endNow(call: LiveCall['call']): void {
  void call
    .hangup(endByApi(call))
    .catch((error: Error) => call.log('hangup failed', { reason: error.message }));
}

/** Whether a call is in a view: live once dialled and until over, queued before. */
function inView({ call }: LiveCall, view: CallView): boolean {
  return !call.over && (view === 'queued') === !call.dialled;
}
