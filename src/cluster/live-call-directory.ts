import type { Call, CallWatcher, LiveChildLeg } from '../call/call.js';
import type { LiveStream } from '../call/streams/call-streams.js';
import { withinStoreDeadline } from '../state/store-deadline.js';
import type { RedisClient } from './node-registry.js';

/**
 * What the cluster keeps of a call in progress: which node runs it, for whom, and enough to
 * close it (record and hangup callback) should that node die.
 */
export interface LiveCallEntry {
  uuid: string;
  node: string;
  account: string;
  subaccount: string | null;
  authId: string;
  requestUuid: string | null;
  direction: 'inbound' | 'outbound';
  from: string;
  to: string;
  callType: 'voice' | 'chatapp_voice';
  parentCallUuid: string | null;
  sourceIp: string;
  initiated: number;
  answered: number | null;
  hangup: { url: string; method: 'GET' | 'POST' } | null;
  /** The parameters its callbacks carried last (CallUUID, From, To, Direction...). */
  params: Record<string, string>;
  /** Its audio streams running (absent from entries of nodes that predate streams here). */
  streams?: LiveStream[];
  /** The legs it placed that are not over (Dial's B leg, a trunk's attempt). */
  childLegs?: LiveChildLeg[];
}

const entryKey = (uuid: string) => `voxgate:live-call:${uuid}`;
const nodeKey = (node: string) => `voxgate:node-calls:${node}`;

/**
 * The owner of every call in progress, in Redis: an entry per call (written when it starts,
 * again when it is answered, when a stream of it starts, connects or ends, and when a leg it
 * placed starts, is answered or ends; removed once its record is written) and the set of each
 * node's calls. Single-key commands only, so it works on a Redis Cluster as on one server.
 */
export class LiveCallDirectory implements CallWatcher {
  constructor(
    private readonly options: {
      redis: RedisClient;
      node: string;
      onError: (error: Error, uuid: string) => void;
    },
  ) {}

  started(call: Call): void {
    this.write(call);
  }

  answered(call: Call): void {
    this.write(call);
  }

  changed(call: Call): void {
    this.write(call);
  }

  ended(call: Call): void {
    const { redis, node } = this.options;
    void withinStoreDeadline(() =>
      Promise.all([redis.del(entryKey(call.uuid)), redis.srem(nodeKey(node), call.uuid)]),
    ).catch((error: Error) => this.options.onError(error, call.uuid));
  }

  /** The node that runs a call, or null when no node does. */
  async find(uuid: string): Promise<LiveCallEntry | null> {
    const text = await withinStoreDeadline(() => this.options.redis.get(entryKey(uuid)));
    return text ? (JSON.parse(text) as LiveCallEntry) : null;
  }

  /** The calls a node runs (or ran, when it died). */
  async callsOf(node: string): Promise<LiveCallEntry[]> {
    const uuids = await withinStoreDeadline(() => this.options.redis.smembers(nodeKey(node)));
    const entries = await Promise.all(uuids.map((uuid) => this.find(uuid)));
    return entries.filter((e): e is LiveCallEntry => e !== null && e.node === node);
  }

  /** Forgets a call that was closed for its dead node. */
  async release(entry: LiveCallEntry): Promise<void> {
    await withinStoreDeadline(async () => {
      await this.options.redis.del(entryKey(entry.uuid));
      await this.options.redis.srem(nodeKey(entry.node), entry.uuid);
    });
  }

  /** Forgets what is left of a node (its set). */
  async releaseNode(node: string): Promise<void> {
    await withinStoreDeadline(() => this.options.redis.del(nodeKey(node)));
  }

  private write(call: Call): void {
    const { init } = call;
    const times = call.leg.times;
    const entry: LiveCallEntry = {
      uuid: call.uuid,
      node: this.options.node,
      account: init.owner.account,
      subaccount: init.owner.subaccount,
      authId: init.owner.authId,
      requestUuid: init.requestUuid,
      direction: call.direction,
      from: init.from,
      to: init.to,
      callType: init.callType ?? 'voice',
      parentCallUuid: init.parentCallUuid ?? null,
      sourceIp: init.sourceIp,
      initiated: times.initiation,
      answered: times.answer ?? null,
      hangup: init.urls.hangup ?? null,
      params: call.requestParams(),
      streams: call.streams.live(),
      childLegs: call.childLegs(),
    };
    const { redis, node } = this.options;
    void withinStoreDeadline(() =>
      Promise.all([
        redis.set(entryKey(call.uuid), JSON.stringify(entry)),
        redis.sadd(nodeKey(node), call.uuid),
      ]),
    ).catch((error: Error) => this.options.onError(error, call.uuid));
  }
}
