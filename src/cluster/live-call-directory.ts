import type { Call, CallWatcher, LiveChildLeg } from '../call/call.js';
import type { LegDialog } from '../call/orphaned-dialogs.js';
import type { LiveStream } from '../call/streams/call-streams.js';
import { withinStoreDeadline } from '../state/store-deadline.js';
import type { HeartbeatSettings } from './heartbeat-settings.js';
import type { RedisClient } from './node-registry.js';

/**
 * What the cluster keeps of a call in progress: which node runs it, for whom, and enough to
 * close it (its SIP peers' BYEs, record and hangup callback) should that node die.
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
  /**
   * Its own leg's SIP dialog once answered (each child leg has its own), for a survivor to
   * end it towards its peer with a BYE. Rewritten with the entry: at the answer, and when a
   * stream or a placed leg changes; a BYE from it steps past the CSeq it holds.
   */
  dialog?: LegDialog | null;
}

/** An entry found for a dead node's call, and when its node last wrote or refreshed it. */
export interface FoundCallEntry extends LiveCallEntry {
  /** Epoch ms (as the reader's clock reckons it); null for an entry without a time to live. */
  seenAt: number | null;
}

/**
 * How long a call's keys live without their node refreshing them (it does at every heartbeat):
 * a call whose node could not remove its keys (Redis away as it ended) and then died is gone
 * this long after the node last saw it. Long enough for a peer to find the node dead (the node
 * time to live) and sweep, twice over: after Redis stood still, nodes judge no one for the
 * node time to live and a beat. 10 s with the default heartbeat settings.
 */
export function liveCallTtlMs({ intervalMs, nodeTtlMs }: HeartbeatSettings): number {
  return 2 * (nodeTtlMs + 2 * intervalMs);
}

const entryKey = (uuid: string) => `voxgate:live-call:${uuid}`;
const nodeKey = (node: string) => `voxgate:node-calls:${node}`;

/**
 * The owner of every call in progress, in Redis: an entry per call (written when it starts,
 * again when it is answered, when a stream of it starts, connects or ends, and when a leg it
 * placed starts, is answered or ends; removed once its record is written) and the set of each
 * node's calls. Every key lives liveCallTtlMs() unless its node refreshes it: refresh(), at
 * each heartbeat, gives every call of this node its time again in one round of PEXPIREs,
 * writes anew an entry Redis lost (restarted empty, flushed), and removes again what a call
 * that ended while Redis was away left. Single-key commands only, so it works on a Redis
 * Cluster as on one server.
 */
export class LiveCallDirectory implements CallWatcher {
  /** This node's calls in progress. */
  private readonly live = new Map<string, Call>();
  /** Calls that ended here and whose keys Redis has not confirmed removed. */
  private readonly leftBehind = new Set<string>();
  /** How long each key lives unless refreshed (ms). */
  private readonly ttlMs: number;

  constructor(
    private readonly options: {
      redis: RedisClient;
      node: string;
      /** The cluster's heartbeat timing, which the keys' time to live follows. */
      heartbeat: HeartbeatSettings;
      onError: (error: Error, uuid: string) => void;
    },
  ) {
    this.ttlMs = liveCallTtlMs(options.heartbeat);
  }

  started(call: Call): void {
    this.live.set(call.uuid, call);
    void this.write(call);
  }

  answered(call: Call): void {
    void this.write(call);
  }

  changed(call: Call): void {
    void this.write(call);
  }

  ended(call: Call): void {
    this.live.delete(call.uuid);
    this.leftBehind.add(call.uuid);
    void this.forget(call.uuid).catch((error: Error) => this.options.onError(error, call.uuid));
  }

  /**
   * Once a heartbeat: removes what ended calls left (their removal failed), then gives each
   * call in progress here its time to live again, writing anew an entry Redis no longer has.
   * The commands of one refresh leave together (the client pipelines a tick's commands).
   */
  async refresh(): Promise<void> {
    const { redis, node } = this.options;
    // One that fails again is tried at the next refresh; the calls in progress come first.
    await Promise.allSettled([...this.leftBehind].map((uuid) => this.forget(uuid)));
    const calls = [...this.live.values()];
    if (calls.length === 0) return;
    const kept = await withinStoreDeadline(
      () => Promise.all(calls.map((call) => redis.pexpire(entryKey(call.uuid), this.ttlMs))),
      undefined,
      this.options.redis,
    );
    // Gone: Redis restarted empty or was flushed, or it was away longer than the time to live.
    const lost = calls.filter((call, k) => kept[k] === 0 && this.live.has(call.uuid));
    await Promise.all([
      ...lost.map((call) => this.write(call)),
      withinStoreDeadline(
        () => redis.pexpire(nodeKey(node), this.ttlMs),
        undefined,
        this.options.redis,
      ),
    ]);
  }

  /** The node that runs a call, or null when no node does. */
  async find(uuid: string): Promise<LiveCallEntry | null> {
    const text = await withinStoreDeadline(
      () => this.options.redis.get(entryKey(uuid)),
      undefined,
      this.options.redis,
    );
    return text ? (JSON.parse(text) as LiveCallEntry) : null;
  }

  /**
   * The calls a node runs (or ran, when it died), each with when its node last wrote or
   * refreshed its entry, from the time it has left to live: `now` is the reader's clock.
   */
  async callsOf(node: string, now: number): Promise<FoundCallEntry[]> {
    const { redis } = this.options;
    const uuids = await withinStoreDeadline(
      () => redis.smembers(nodeKey(node)),
      undefined,
      this.options.redis,
    );
    const found = await Promise.all(
      uuids.map(async (uuid): Promise<FoundCallEntry | null> => {
        const [text, left] = await withinStoreDeadline(
          () => Promise.all([redis.get(entryKey(uuid)), redis.pttl(entryKey(uuid))]),
          undefined,
          this.options.redis,
        );
        if (!text) return null;
        const entry = JSON.parse(text) as LiveCallEntry;
        // An entry written without a time to live (by a node of an older version) says nothing.
        const seenAt = left > 0 ? now - (this.ttlMs - left) : null;
        return { ...entry, seenAt };
      }),
    );
    return found.filter((e): e is FoundCallEntry => e !== null && e.node === node);
  }

  /** Forgets a call that was closed for its dead node. */
  async release(entry: LiveCallEntry): Promise<void> {
    await withinStoreDeadline(
      async () => {
        await this.options.redis.del(entryKey(entry.uuid));
        await this.options.redis.srem(nodeKey(entry.node), entry.uuid);
      },
      undefined,
      this.options.redis,
    );
  }

  /** Forgets what is left of a node (its set). */
  async releaseNode(node: string): Promise<void> {
    await withinStoreDeadline(
      () => this.options.redis.del(nodeKey(node)),
      undefined,
      this.options.redis,
    );
  }

  /** Removes the keys of a call that ended here; they are tried again at each refresh. */
  private async forget(uuid: string): Promise<void> {
    const { redis, node } = this.options;
    await withinStoreDeadline(
      () => Promise.all([redis.del(entryKey(uuid)), redis.srem(nodeKey(node), uuid)]),
      undefined,
      this.options.redis,
    );
    this.leftBehind.delete(uuid);
  }

  private write(call: Call): Promise<void> {
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
      dialog: call.leg.dialogSnapshot(),
    };
    const { redis, node } = this.options;
    return withinStoreDeadline(
      () =>
        Promise.all([
          redis.set(entryKey(call.uuid), JSON.stringify(entry), 'PX', this.ttlMs),
          redis.sadd(nodeKey(node), call.uuid),
          redis.pexpire(nodeKey(node), this.ttlMs),
        ]),
      undefined,
      this.options.redis,
    ).then(
      () => undefined,
      (error: Error) => this.options.onError(error, call.uuid),
    );
  }
}
