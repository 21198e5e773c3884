import type {
  ConferenceControl,
  ConferenceRecordingRequest,
  ConferenceView,
  MemberAction,
} from '../call/conferences/conference-control.js';
import type { LiveRecording } from '../call/live-control.js';
import type { NodeRequests } from './node-requests.js';

/** The actions that name one room, as sent to the node that holds it. */
const ON_ROOM = ['get', 'hangup', 'onMembers', 'record', 'stopRecording'] as const;
type OnRoom = (typeof ON_ROOM)[number];

/** The actions every node answers for its own rooms, gathered. */
const ON_ALL = ['list', 'hangupAll'] as const;
type OnAll = (typeof ON_ALL)[number];

/** What a room's action gives when no live node holds that room. */
const NOT_HELD: Record<OnRoom, unknown> = {
  get: null,
  hangup: false,
  onMembers: false,
  record: null,
  stopRecording: false,
};

/** The bus's name of a conference action (apart from the call actions of ClusterControl). */
const busName = (method: OnRoom | OnAll) => `conference.${method}`;

/**
 * ConferenceControl over every node: a room lives on the node that claimed it (its claim in
 * Redis names it), so an action on a room runs there, through the same requests as call
 * control (NodeRequests), and that node's own LiveConferences answers as if the client had
 * asked it; a room no node claims is this node's to answer for (open here unclaimed while the
 * store was away, or not found). Listings and "all rooms" gather every live node's answer.
 */
export class ClusterConferences implements ConferenceControl {
  constructor(
    private readonly local: ConferenceControl,
    private readonly options: {
      requests: NodeRequests;
      /** The node holding a room's claim; null when none does. */
      holder: (authId: string, name: string) => Promise<string | null>;
    },
  ) {
    for (const method of [...ON_ROOM, ...ON_ALL]) {
      options.requests.serve(busName(method), (args) => this.runLocally(method, args));
    }
  }

  private runLocally(method: OnRoom | OnAll, args: unknown[]): Promise<unknown> {
    return (this.local[method] as (...a: unknown[]) => Promise<unknown>).apply(this.local, args);
  }

  async list(authId: string): Promise<string[]> {
    return (await this.gather<string[]>('list', [authId])).flat().sort();
  }

  async hangupAll(authId: string): Promise<number> {
    return (await this.gather<number>('hangupAll', [authId])).reduce((a, b) => a + b, 0);
  }

  get(authId: string, name: string): Promise<ConferenceView | null> {
    return this.onRoom('get', authId, name, []) as Promise<ConferenceView | null>;
  }

  hangup(authId: string, name: string): Promise<boolean> {
    return this.onRoom('hangup', authId, name, []) as Promise<boolean>;
  }

  onMembers(authId: string, name: string, members: string, action: MemberAction) {
    return this.onRoom('onMembers', authId, name, [members, action]) as Promise<boolean>;
  }

  record(
    authId: string,
    name: string,
    request: ConferenceRecordingRequest,
  ): Promise<LiveRecording | null> {
    return this.onRoom('record', authId, name, [request]) as Promise<LiveRecording | null>;
  }

  stopRecording(authId: string, name: string): Promise<boolean> {
    return this.onRoom('stopRecording', authId, name, []) as Promise<boolean>;
  }

  /** Runs an action on the node that holds the room. */
  private async onRoom(
    method: OnRoom,
    authId: string,
    name: string,
    rest: unknown[],
  ): Promise<unknown> {
    const { requests, holder } = this.options;
    const args = [authId, name, ...rest];
    // The store away, no other node can be asked: this node answers for its own rooms.
    const node = await holder(authId, name).catch(() => null);
    if (node === null || node === requests.node) return this.runLocally(method, args);
    return requests.ask(
      node,
      busName(method),
      args,
      `holding conference ${name}`,
      NOT_HELD[method],
    );
  }

  private gather<T>(method: OnAll, args: unknown[]): Promise<T[]> {
    return this.options.requests.gather(
      busName(method),
      args,
      () => this.runLocally(method, args) as Promise<T>,
    );
  }
}
