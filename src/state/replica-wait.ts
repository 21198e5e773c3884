import calculateSlot from 'cluster-key-slot';
import { Cluster, type Redis } from 'ioredis';
import { StoreUnavailable } from '../core/errors.js';
import type { RedisClient } from './redis-connection.js';

export interface ReplicaWaitOptions {
  /** How long a master may take to hear from its replicas (ms). */
  timeoutMs?: number;
  /** How long a master's count of connected replicas is trusted (ms). */
  replicasTtlMs?: number;
  now?: () => number;
}

/**
 * Holds back the acknowledgement of a write until every replica connected to the master that
 * took it has it too (Redis WAIT), so a replica promoted by Sentinel or by the Cluster after the
 * master dies holds everything a client was told was stored. Replication is asynchronous
 * otherwise: a master killed right after its reply loses what it had not yet streamed.
 *
 * WAIT applies to the writes of the connection it is sent on, so it goes to the very client
 * (on a Cluster, the very node connection) the writes went through. A master with no replica
 * has nothing to wait for (and nothing a failover could promote).
 */
export class ReplicaWait {
  private readonly timeoutMs: number;
  private readonly replicasTtlMs: number;
  private readonly now: () => number;
  private readonly replicas = new WeakMap<Redis, { count: number; at: number }>();

  constructor(
    private readonly client: RedisClient,
    options: ReplicaWaitOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.replicasTtlMs = options.replicasTtlMs ?? 1000;
    this.now = options.now ?? Date.now;
  }

  /** Resolves once the replicas of every master holding one of `keys` have its writes. */
  async after(keys: string[]): Promise<void> {
    await Promise.all(this.mastersOf(keys).map((master) => this.waitOn(master)));
  }

  private mastersOf(keys: string[]): Redis[] {
    if (!(this.client instanceof Cluster)) return [this.client];
    const byAddress = new Map<string, Redis>();
    for (const node of this.client.nodes('master'))
      byAddress.set(`${node.options.host}:${node.options.port}`, node);
    const masters = new Set<Redis>();
    for (const key of keys) {
      const address = this.client.slots[calculateSlot(key)]?.[0];
      const node = address === undefined ? undefined : byAddress.get(address);
      if (node) masters.add(node);
    }
    return [...masters];
  }

  private async waitOn(master: Redis): Promise<void> {
    const wanted = await this.connectedReplicas(master);
    if (wanted === 0) return;
    const acknowledged = await master.wait(wanted, this.timeoutMs);
    if (acknowledged < wanted) {
      // Seen again next time: a replica that went away is no longer waited for.
      this.replicas.delete(master);
      throw new StoreUnavailable(
        `Redis replicas did not confirm the write within ${this.timeoutMs} ms ` +
          `(${acknowledged} of ${wanted}); it may or may not have been kept`,
      );
    }
  }

  private async connectedReplicas(master: Redis): Promise<number> {
    const known = this.replicas.get(master);
    if (known && this.now() - known.at < this.replicasTtlMs) return known.count;
    // Every connected replica, online or still in its sync (connected_slaves). ROLE lists only
    // those the master has put online, and a replica still waiting for or receiving its RDB (its
    // link already up on its side) can be promoted without the writes made meanwhile: they were
    // acknowledged without a WAIT and lost with the master. WAIT counts only replicas that have
    // the write, so one still syncing makes the write a StoreUnavailable (503).
    const info = String(await master.info('replication'));
    const count = /^role:master\r?$/m.test(info)
      ? Number(/^connected_slaves:(\d+)/m.exec(info)?.[1] ?? 0)
      : 0;
    this.replicas.set(master, { count, at: this.now() });
    return count;
  }
}
