import type { RoomClaim, RoomClaims } from '../call/conferences/room-claims.js';
import { StoreUnavailable } from '../core/errors.js';
import { withinStoreDeadline } from '../state/store-deadline.js';
import type { HeartbeatSettings } from './heartbeat-settings.js';
import { liveCallTtlMs } from './live-call-directory.js';
import type { RedisClient } from './node-registry.js';

const keyOf = (authId: string, name: string) => `voxgate:conference-room:${authId}:${name}`;
/** What a claim holds: the node and the room, so that a node's later room is not confused. */
const valueOf = (node: string, roomUuid: string) => `${node} ${roomUuid}`;
const nodeOf = (value: string) => value.slice(0, value.lastIndexOf(' '));

/** Sets KEYS[1] to ARGV[2] for ARGV[3] ms if it still holds ARGV[1]; 1 when it did. */
const TAKE_OVER = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end return 0`;
/** Deletes KEYS[1] if it holds ARGV[1]. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1]) end return 0`;
/** Renews KEYS[1] for ARGV[2] ms if it holds ARGV[1], writes it again if it is gone. */
const RENEW = `local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if not held then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 2 end
return 0`;

/**
 * The rooms' claims in Redis, one key per room naming its node, written with SET NX and a time
 * to live that each heartbeat renews (renew()). A claim whose node is no longer alive (its
 * heartbeat stopped: killed, cut off) is taken over, with a compare-and-set so that two nodes
 * taking it at once do not both win. Single-key commands and scripts only, so it works on a
 * Redis Cluster as on one server.
 */
export class ConferenceClaims implements RoomClaims {
  /** This node's claims, by key: what renew() keeps alive. */
  private readonly held = new Map<string, string>();
  /**
   * How long a claim lives without its node renewing it (it does at every heartbeat), as long
   * as a call's keys: a node that died holding it is found dead sooner (the node time to live),
   * and its claim taken over by the next member on a live node then; this is the bound when
   * Redis cannot tell (the node's heartbeat lost with it).
   */
  private readonly ttlMs: number;

  constructor(
    private readonly options: {
      redis: RedisClient;
      node: string;
      /** The cluster's heartbeat timing, which the claims' time to live follows. */
      heartbeat: HeartbeatSettings;
      isAlive: (node: string) => Promise<boolean>;
      log: { warn(object: object, message: string): void };
    },
  ) {
    this.ttlMs = liveCallTtlMs(options.heartbeat);
  }

  /**
   * Claims a room about to open here. When Redis does not answer, the room opens here
   * unclaimed (the rooms' caller logs it) and the claim is made by the next renew() that
   * reaches Redis, as a claim Redis lost is: from then on a member on another node is refused.
   */
  async claim(authId: string, name: string, roomUuid: string): Promise<RoomClaim> {
    const key = keyOf(authId, name);
    const mine = valueOf(this.options.node, roomUuid);
    try {
      return await this.claimNow(key, mine, name);
    } catch (error) {
      if (!(error instanceof StoreUnavailable)) throw error;
      this.held.set(key, mine);
      throw error;
    }
  }

  private async claimNow(key: string, mine: string, name: string): Promise<RoomClaim> {
    // A few rounds at most: another node may take over or release as this one looks.
    for (let round = 0; round < 3; round++) {
      const taken = await this.store((redis) => redis.set(key, mine, 'PX', this.ttlMs, 'NX'));
      if (taken !== null) return this.hold(key, mine);
      const holder = await this.store((redis) => redis.get(key));
      if (holder === null) continue;
      const node = nodeOf(holder);
      // This node's own claim, of a room that closed here without its release going through.
      if (node !== this.options.node && (await this.options.isAlive(node))) {
        return { held: false, node };
      }
      const over = await this.store(
        (redis) => redis.eval(TAKE_OVER, 1, key, holder, mine, this.ttlMs) as Promise<number>,
      );
      if (over === 1) return this.hold(key, mine);
    }
    throw new Error(`the claim of conference ${name} kept changing hands`);
  }

  /** The node whose claim a room is under; null when no node claims it. */
  async holder(authId: string, name: string): Promise<string | null> {
    const held = await this.store((redis) => redis.get(keyOf(authId, name)));
    return held === null ? null : nodeOf(held);
  }

  async release(authId: string, name: string, roomUuid: string): Promise<void> {
    const key = keyOf(authId, name);
    const mine = valueOf(this.options.node, roomUuid);
    if (this.held.get(key) === mine) this.held.delete(key);
    await this.store((redis) => redis.eval(RELEASE, 1, key, mine));
  }

  /**
   * Once a heartbeat: gives each room open here its time again, and writes anew a claim Redis
   * lost (restarted empty, flushed). A claim found in another node's hands (this node's
   * renewals failed for longer than the time to live, and a member opened the room there) is
   * let go with a warning: the two rooms go on apart until one closes.
   */
  async renew(): Promise<void> {
    const held = [...this.held];
    if (held.length === 0) return;
    const results = await this.store((redis) =>
      Promise.all(
        held.map(([key, mine]) => redis.eval(RENEW, 1, key, mine, this.ttlMs) as Promise<number>),
      ),
    );
    results.forEach((result, k) => {
      const [key, mine] = held[k]!;
      if (result !== 0 || this.held.get(key) !== mine) return;
      this.held.delete(key);
      this.options.log.warn(
        { cluster: true, claim: key },
        'a conference room of this node is claimed by another node: it is open on both',
      );
    });
  }

  private hold(key: string, mine: string): RoomClaim {
    this.held.set(key, mine);
    return { held: true };
  }

  private store<T>(operation: (redis: RedisClient) => Promise<T>): Promise<T> {
    const { redis } = this.options;
    return withinStoreDeadline(() => operation(redis), undefined, redis);
  }
}
