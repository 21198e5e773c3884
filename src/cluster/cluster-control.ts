import type { CallOwner } from '../call/call-launcher.js';
import type { LiveCallFilters, LiveCallView } from '../call/live-call-view.js';
import type {
  CallControl,
  CallView,
  LiveAction,
  LiveControl,
  LiveRecording,
  LiveSpeech,
} from '../call/live-control.js';
import type { RecordingRequest } from '../call/recordings/call-recordings.js';
import type { StreamRequest } from '../call/streams/stream-request.js';
import type { CallConversion } from '../state/records.js';
import type { LiveCallDirectory } from './live-call-directory.js';
import type { NodeRequests } from './node-requests.js';

/** The actions that name one call, as sent to the node that runs it. */
const ON_CALL = [
  'get',
  'hangup',
  'speak',
  'stopSpeaking',
  'sendDigits',
  'startStream',
  'stopStream',
  'stopStreams',
  'convert',
  'record',
  'stopRecording',
] as const;
type OnCall = (typeof ON_CALL)[number];

/** The actions every node answers for its own calls, gathered. */
const ON_ALL = ['list', 'hangupAll', 'cancelRequest'] as const;
type OnAll = (typeof ON_ALL)[number];

/** What a call's action gives when no live node runs that call. */
const NOT_RUNNING: Record<OnCall, unknown> = {
  get: null,
  hangup: false,
  speak: 'not-found',
  stopSpeaking: 'not-found',
  sendDigits: 'not-found',
  startStream: null,
  stopStream: false,
  stopStreams: null,
  convert: 'not-live',
  record: null,
  stopRecording: null,
};

/**
 * CallControl over every node: a call of this node is acted on here; a call of another node
 * (its owner found in the live call directory) by a request to that node, whose own
 * LiveControl answers as if the client had asked it; listings and "all calls" actions gather
 * every live node's answer. An owner that does not answer in time is dead when its heartbeat
 * is gone too (its calls are then closed by the reaper, and the call is not found), and
 * otherwise the request fails with 503: never a hang.
 */
export class ClusterControl implements CallControl {
  constructor(
    private readonly local: LiveControl,
    private readonly options: {
      requests: NodeRequests;
      directory: LiveCallDirectory;
      /** Whether this node runs a call (whoever owns it). */
      runsHere: (uuid: string) => boolean;
    },
  ) {
    // Another node's request runs here as the client's would have.
    for (const method of [...ON_CALL, ...ON_ALL]) {
      options.requests.serve(method, (args) => this.runLocally(method, args));
    }
  }

  /** An action of this node's own LiveControl, by name. */
  private runLocally(method: OnCall | OnAll, args: unknown[]): Promise<unknown> {
    return (this.local[method] as (...a: unknown[]) => Promise<unknown>).apply(this.local, args);
  }

  async list(
    viewer: CallOwner,
    view: CallView,
    filters: LiveCallFilters = {},
  ): Promise<LiveCallView[]> {
    const all = await this.gather<LiveCallView[]>('list', [viewer, view, filters]);
    return all.flat().sort((a, b) => a.initiated - b.initiated);
  }

  async hangupAll(viewer: CallOwner): Promise<number> {
    return (await this.gather<number>('hangupAll', [viewer])).reduce((a, b) => a + b, 0);
  }

  async cancelRequest(viewer: CallOwner, requestUuid: string): Promise<number> {
    const counts = await this.gather<number>('cancelRequest', [viewer, requestUuid]);
    return counts.reduce((a, b) => a + b, 0);
  }

  get(viewer: CallOwner, view: CallView, uuid: string): Promise<LiveCallView | null> {
    return this.onCall('get', uuid, [viewer, view, uuid]) as Promise<LiveCallView | null>;
  }

  hangup(viewer: CallOwner, uuid: string): Promise<boolean> {
    return this.onCall('hangup', uuid, [viewer, uuid]) as Promise<boolean>;
  }

  speak(viewer: CallOwner, uuid: string, speech: LiveSpeech): Promise<LiveAction> {
    return this.onCall('speak', uuid, [viewer, uuid, speech]) as Promise<LiveAction>;
  }

  stopSpeaking(viewer: CallOwner, uuid: string): Promise<LiveAction> {
    return this.onCall('stopSpeaking', uuid, [viewer, uuid]) as Promise<LiveAction>;
  }

  sendDigits(
    viewer: CallOwner,
    uuid: string,
    digits: string,
    leg: 'aleg' | 'bleg' = 'aleg',
  ): Promise<LiveAction> {
    return this.onCall('sendDigits', uuid, [viewer, uuid, digits, leg]) as Promise<LiveAction>;
  }

  startStream(
    viewer: CallOwner,
    uuid: string,
    request: StreamRequest,
  ): Promise<{ streamId: string } | null | 'not-connected'> {
    return this.onCall('startStream', uuid, [viewer, uuid, request]) as Promise<
      { streamId: string } | null | 'not-connected'
    >;
  }

  stopStream(viewer: CallOwner, uuid: string, streamId: string): Promise<boolean> {
    return this.onCall('stopStream', uuid, [viewer, uuid, streamId]) as Promise<boolean>;
  }

  stopStreams(viewer: CallOwner, uuid: string): Promise<number | null> {
    return this.onCall('stopStreams', uuid, [viewer, uuid]) as Promise<number | null>;
  }

  convert(
    viewer: CallOwner,
    uuid: string,
    conversion: CallConversion,
  ): Promise<'live' | 'not-live'> {
    return this.onCall('convert', uuid, [viewer, uuid, conversion]) as Promise<'live' | 'not-live'>;
  }

  record(
    viewer: CallOwner,
    uuid: string,
    request: RecordingRequest,
  ): Promise<LiveRecording | null | 'not-connected'> {
    return this.onCall('record', uuid, [viewer, uuid, request]) as Promise<
      LiveRecording | null | 'not-connected'
    >;
  }

  stopRecording(viewer: CallOwner, uuid: string, url?: string | null): Promise<number | null> {
    return this.onCall('stopRecording', uuid, [viewer, uuid, url ?? null]) as Promise<
      number | null
    >;
  }

  /** Runs an action on the node that runs the call. */
  private async onCall(method: OnCall, uuid: string, args: unknown[]): Promise<unknown> {
    const { directory, requests, runsHere } = this.options;
    if (runsHere(uuid)) return this.runLocally(method, args);
    const entry = await directory.find(uuid);
    if (!entry || entry.node === requests.node) return this.runLocally(method, args);
    return requests.ask(entry.node, method, args, `running call ${uuid}`, NOT_RUNNING[method]);
  }

  /** Every live node's answer to an action on its own calls. */
  private gather<T>(method: OnAll, args: unknown[]): Promise<T[]> {
    return this.options.requests.gather(
      method,
      args,
      () => this.runLocally(method, args) as Promise<T>,
    );
  }
}
