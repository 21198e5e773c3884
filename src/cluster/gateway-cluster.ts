import { createHmac } from 'node:crypto';
import { Cluster } from 'ioredis';
import type { CallEngine } from '../call/call-engine.js';
import type { CallLauncher, CallOwner } from '../call/call-launcher.js';
import type { ConferenceControl } from '../call/conferences/conference-control.js';
import type { LiveControl } from '../call/live-control.js';
import type { OutboundCallRequest } from '../call/outbound-request.js';
import { ApiError, StoreUnavailable } from '../core/errors.js';
import { ClusterConferences } from './cluster-conferences.js';
import { ClusterControl } from './cluster-control.js';
import { ConferenceClaims } from './conference-claims.js';
import { ControlBus } from './control-bus.js';
import type { HeartbeatSettings } from './heartbeat-settings.js';
import { NodeReaper, type NodeReaperOptions } from './node-reaper.js';
import { NodeRegistry, type NodeInfo, type RedisClient } from './node-registry.js';
import { NodeRequests } from './node-requests.js';

/** How long a node waits for another's answer to a control request. */
export const CONTROL_TIMEOUT_MS = 2000;

/** What the reaper needs (all but the registry, made here), and the rest of the node. */
export interface GatewayClusterOptions extends Omit<NodeReaperOptions, 'registry'> {
  /** The main account's token: every node of one gateway has it, so it keys the bus. */
  mainToken: string;
  /**
   * How often this node beats and looks for dead nodes, and how long a node may go without a
   * beat before it is dead.
   */
  heartbeat: HeartbeatSettings;
  engine: CallEngine;
  local: LiveControl;
  /** This node's conference rooms, as the Conference API acts on them. */
  localConferences: ConferenceControl;
  /** This node's SMPP binds: recorded with its heartbeat, so Redis names their owner. */
  binds?: () => NodeInfo['binds'];
  /** Where this node's SIP and REST listen, once they do. */
  addresses: () => { sip: string; http: string };
  /**
   * Writes again what the gateway wrote once at its start and a wiped Redis (restarted empty,
   * flushed) lost: the main account. Resolves to whether anything was missing.
   */
  restore?: () => Promise<boolean>;
}

/**
 * This node's part in a gateway of several nodes sharing Redis: its heartbeat and its peers
 * (NodeRegistry), requests to and from them (ControlBus), the API's call control across them
 * (ClusterControl), the node each conference room lives on (ConferenceClaims) and the
 * Conference API across them (ClusterConferences), outbound calls placed on the least loaded
 * active node, and the closing of dead nodes' calls, streams and connection-held
 * registrations (NodeReaper, run at every heartbeat).
 */
export class GatewayCluster implements CallLauncher {
  readonly registry: NodeRegistry;
  readonly control: ClusterControl;
  /** The Conference API's rooms, on whichever node holds each. */
  readonly conferences: ClusterConferences;
  /** Which node each conference room lives on (renewed with the heartbeat). */
  readonly roomClaims: ConferenceClaims;
  private readonly bus: ControlBus;
  private readonly reaper: NodeReaper;
  private state: NodeInfo['state'] = 'active';
  private stopped = false;
  private restoring: Promise<void> | null = null;
  private readonly startedAt: number;

  constructor(private readonly options: GatewayClusterOptions) {
    const { redis, node, scheduler, engine, heartbeat, log } = options;
    this.startedAt = scheduler.now();
    this.registry = new NodeRegistry({
      redis,
      scheduler,
      heartbeat,
      describe: () => ({
        id: node,
        ...options.addresses(),
        state: this.state,
        calls: engine.liveCount,
        binds: options.binds?.() ?? [],
        startedAt: this.startedAt,
      }),
      // Each beat keeps this node's calls' keys alive (they outlive it by their time to live)
      // and finds its main account still there: Redis may have been wiped since the last.
      beforeBeat: async () => {
        await Promise.all([options.directory.refresh(), this.restore(), this.roomClaims.renew()]);
      },
      onLost: () => void this.restore(),
      onError: (error) => log.warn({ err: error, cluster: true }, 'heartbeat failed'),
    });
    this.bus = new ControlBus({
      node,
      redis,
      subscriber: subscriberOf(redis, (error) =>
        log.warn({ err: error, cluster: true }, 'control subscription: Redis unreachable'),
      ),
      secret: createHmac('sha256', options.mainToken).update('voxgate control bus').digest(),
      timeoutMs: CONTROL_TIMEOUT_MS,
      scheduler,
      isAlive: (id) => this.registry.isAlive(id),
      log,
    });
    this.reaper = new NodeReaper({ ...options, registry: this.registry });
    this.roomClaims = new ConferenceClaims({
      redis,
      node,
      heartbeat,
      isAlive: (id) => this.registry.isAlive(id),
      log,
    });
    const requests = new NodeRequests({
      node,
      bus: this.bus,
      registry: this.registry,
      reap: (dead) => this.reaper.reap(dead),
    });
    this.control = new ClusterControl(options.local, {
      requests,
      directory: options.directory,
      runsHere: (uuid) => engine.runs(uuid),
    });
    this.conferences = new ClusterConferences(options.localConferences, {
      requests,
      holder: (authId, name) => this.roomClaims.holder(authId, name),
    });
    this.bus.handle(
      'fire',
      ([owner, request, sourceIp]: [CallOwner, OutboundCallRequest, string]) =>
        this.fireHere(owner, request, sourceIp),
    );
  }

  get node(): string {
    return this.options.node;
  }

  get draining(): boolean {
    return this.state === 'draining';
  }

  async start(): Promise<void> {
    await this.bus.start();
    await this.registry.start();
    this.sweepSoon();
    // A Redis back after a restart may be empty: what it lost is written again at once.
    this.options.redis.on('ready', () => void this.restore());
  }

  /** Tells the peers at once that this node takes no new work. */
  async drain(): Promise<void> {
    this.state = 'draining';
    // Redis away, the next heartbeat that goes through tells them; the drain goes on.
    await this.registry
      .beat()
      .catch((error: Error) =>
        this.options.log.warn({ err: error, cluster: true }, 'draining not yet told to the peers'),
      );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.registry.stop().catch(() => undefined);
    await this.bus.stop();
  }

  /** The live nodes, this one included. */
  peers(): Promise<NodeInfo[]> {
    return this.registry.alive();
  }

  /**
   * Places a request's calls on the active node with the fewest calls (this one on a tie),
   * through the bus when it is another; this node when no other answers and it is active.
   */
  async fire(
    owner: CallOwner,
    request: OutboundCallRequest,
    sourceIp: string,
  ): Promise<{ requestUuid: string }> {
    const { node, engine } = this.options;
    const active = (await this.registry.alive()).filter((n) => n.state === 'active');
    const least = active
      .filter((n) => n.id !== node)
      .reduce<NodeInfo | null>(
        (best, n) => (best === null || n.calls < best.calls ? n : best),
        null,
      );
    // This node's own state and load are known here, whether or not its last heartbeat was
    // read back in time (a slow or just failed-over Redis): an active node keeps its tie.
    const hereLoad = this.draining ? Infinity : engine.liveCount;
    if (least && least.calls < hereLoad) {
      try {
        return (await this.bus.call(least.id, 'fire', [owner, request, sourceIp])) as {
          requestUuid: string;
        };
      } catch (error) {
        // The store gone, this node could not place them either.
        if (error instanceof ApiError || error instanceof StoreUnavailable || this.draining)
          throw error;
        this.options.log.warn(
          { err: error, node: least.id },
          'placing calls on a peer failed; here instead',
        );
      }
    }
    return this.fireHere(owner, request, sourceIp);
  }

  private fireHere(
    owner: CallOwner,
    request: OutboundCallRequest,
    sourceIp: string,
  ): Promise<{ requestUuid: string }> {
    if (this.draining)
      throw new ApiError(
        'unavailable',
        `node ${this.options.node} is draining: it takes no new calls`,
      );
    return this.options.engine.fire(owner, request, sourceIp);
  }

  /** Writes again what a wiped Redis lost of this gateway's start; one round at a time. */
  private restore(): Promise<void> {
    const restore = this.options.restore;
    if (!restore || this.stopped) return Promise.resolve();
    this.restoring ??= restore()
      .then((restored) => {
        if (restored)
          this.options.log.warn(
            { cluster: true },
            'Redis had lost the main account (restarted empty or flushed): written again',
          );
      })
      .catch((error: Error) =>
        this.options.log.warn({ err: error, cluster: true }, 'restoring the main account failed'),
      )
      .finally(() => (this.restoring = null));
    return this.restoring;
  }

  /** Looks for dead nodes at every heartbeat. */
  private sweepSoon(): void {
    if (this.stopped) return;
    this.options.scheduler.after(this.options.heartbeat.intervalMs, () => {
      this.reaper
        .sweep()
        .catch((error: Error) => this.options.log.warn({ err: error }, 'closing dead nodes failed'))
        .finally(() => this.sweepSoon());
    });
  }
}

/**
 * A connection of its own for subscribing, to the same server or cluster; it reconnects by
 * itself, and tells each new kind of error once. ControlBus subscribes again at each
 * reconnection: ioredis's own resubscription leaves its promise unobserved, and a SUBSCRIBE
 * that times out on a Redis that hangs just then would be an unhandled rejection, which ends
 * the process.
 */
function subscriberOf(redis: RedisClient, onError: (error: Error) => void): RedisClient {
  const subscriber =
    redis instanceof Cluster ? redis.duplicate() : redis.duplicate({ autoResubscribe: false });
  let last: string | undefined;
  subscriber.on('error', (error: Error) => {
    if (error.message !== last) onError(error);
    last = error.message;
  });
  subscriber.on('ready', () => (last = undefined));
  return subscriber;
}
