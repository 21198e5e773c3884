import { ApiError } from '../core/errors.js';
import { ControlTimeout, type ControlBus } from './control-bus.js';
import type { NodeRegistry } from './node-registry.js';

export interface NodeRequestsOptions {
  /** This node. */
  node: string;
  bus: ControlBus;
  registry: NodeRegistry;
  /** Closes a dead node's calls now (elected, once). */
  reap: (node: string) => Promise<void>;
}

/**
 * How the API's actions reach the node that holds what they name (a call, a conference room),
 * or every live node, over the control bus: the node asked answers as if the client had asked
 * it. An owner that does not answer in time is dead when its heartbeat is gone too (its calls
 * are then closed by the reaper, and what it held is not found), and otherwise the request
 * fails with 503: never a hang.
 */
export class NodeRequests {
  constructor(private readonly options: NodeRequestsOptions) {}

  get node(): string {
    return this.options.node;
  }

  /** Serves `method` for other nodes with this node's own answer. */
  serve(method: string, here: (args: unknown[]) => Promise<unknown>): void {
    this.options.bus.handle(method, here);
  }

  /**
   * `owner`'s answer to `method`; `gone` when it is dead. `held` says what the owner holds, for
   * the 503's message (`running call {uuid}`).
   */
  async ask<T>(owner: string, method: string, args: unknown[], held: string, gone: T): Promise<T> {
    const { bus, registry, reap } = this.options;
    try {
      return (await bus.call(owner, method, args)) as T;
    } catch (error) {
      if (!(error instanceof ControlTimeout)) throw error;
      if (await registry.isAlive(owner)) {
        throw new ApiError('unavailable', `node ${owner} ${held} did not answer in time`);
      }
      await reap(owner);
      return gone;
    }
  }

  /**
   * Every live node's answer to an action on what it holds, this node's (`here`) first; a node
   * that does not answer in time is left out.
   */
  async gather<T>(method: string, args: unknown[], here: () => Promise<T>): Promise<T[]> {
    const { node, bus, registry } = this.options;
    const peers = (await registry.alive()).filter((n) => n.id !== node);
    const there = peers.map((peer) =>
      (bus.call(peer.id, method, args) as Promise<T>).catch((error: Error) => {
        if (error instanceof ControlTimeout) return null;
        throw error;
      }),
    );
    const all = await Promise.all([here(), ...there]);
    return all.filter((x): x is Awaited<T> => x !== null) as T[];
  }
}
