import { availableParallelism } from 'node:os';
import type { Transferable } from 'node:worker_threads';
import { checkSessionSpec, type MediaSessionSpec } from '../pipeline/session-spec.js';
import { MediaWorkerChannel } from './media-worker-channel.js';
import type { Command, LatencyReport, Results, SessionEvent, WorkerSettings } from './protocol.js';

export interface PoolUser {
  onEvent(sessionId: string, event: SessionEvent): void;
  /** Told of a worker's crash (its thread id), once per worker, before its sessions are ended. */
  onWorkerCrash?(error: Error, sessions: string[], threadId: number): void;
  /** Stream latencies a worker observed (about every second while streams run). */
  onLatency?(report: LatencyReport): void;
}

export interface PoolOptions {
  settings: WorkerSettings;
  /** Worker threads; one less than the cores by default, at least one. */
  size?: number;
}

/** The commands that concern one session, routed to the worker it runs on. */
export type SessionCommand = Exclude<
  Extract<Command, { sessionId: string }>,
  { type: 'createSession' | 'destroySession' }
>;

interface Slot {
  channel: MediaWorkerChannel;
  sessions: Set<string>;
  /** RTP ports the worker has bound ahead and nobody has reserved yet. */
  ports: number[];
  /** Settled by the worker's first announcement of ports (or its death). */
  started: Promise<void>;
  markStarted(): void;
}

/**
 * The media workers: sessions are spread across them (the least loaded takes the next, or
 * the worker of the session it is to be bridged with), and a worker that dies ends each of
 * its sessions with an `ended` event whose cause says so, then is replaced. Nothing is ever
 * dropped silently.
 */
export class MediaWorkerPool {
  readonly size: number;
  /** Started with the first session, so a gateway that carries no audio runs no threads. */
  private readonly workers: Slot[] = [];
  private readonly bySession = new Map<string, Slot>();

  constructor(
    private readonly user: PoolUser,
    private readonly options: PoolOptions,
  ) {
    this.size = options.size ?? Math.max(1, availableParallelism() - 1);
    if (!Number.isInteger(this.size) || this.size < 1) {
      throw new RangeError(`Expected a pool size of at least 1 but received ${this.size}`);
    }
  }

  /** Sessions open now. */
  get sessions(): number {
    return this.bySession.size;
  }

  /** The thread a session runs on (for tests and stats). */
  threadOf(sessionId: string): number | null {
    return this.bySession.get(sessionId)?.channel.threadId ?? null;
  }

  /**
   * Opens a session's RTP ports and pipeline on a worker. `near` names a session to share a
   * worker with, as the two legs of a Dial must to be bridged.
   *
   * When the worker has a pair bound ahead, the pair is reserved here and the ports are known
   * at once: the worker is told to build the session on it, quietly, and the caller does not
   * wait for a busy worker to answer (commands to one worker run in order, so later ones find
   * the session). A spec is checked first either way; if the worker still fails to open the
   * session, it ends with an `ended` event that says why.
   */
  async createSession(
    sessionId: string,
    spec: MediaSessionSpec,
    placement: { near?: string } = {},
  ): Promise<Results['createSession']> {
    checkSessionSpec(spec);
    this.start();
    let slot = this.placeSession(sessionId, placement);
    if (slot.ports.length === 0) {
      // A worker just started has its first pairs on the way: they beat binding on demand.
      await slot.started;
      slot = this.placeSession(sessionId, placement);
    }
    slot.sessions.add(sessionId);
    this.bySession.set(sessionId, slot);
    const port = slot.ports.shift();
    if (port !== undefined) {
      if (!slot.channel.tell({ type: 'createSession', sessionId, spec, port })) {
        this.forget(sessionId, slot);
        throw new Error('media worker is not running');
      }
      return { sessionId, port, rtcpPort: port + 1 };
    }
    try {
      return await slot.channel.request({ type: 'createSession', sessionId, spec });
    } catch (error) {
      this.forget(sessionId, slot);
      throw error;
    }
  }

  private placeSession(sessionId: string, placement: { near?: string }): Slot {
    if (this.bySession.has(sessionId)) throw new Error(`session ${sessionId} already exists`);
    if (placement.near === undefined) {
      return this.workers.reduce((a, b) => (b.sessions.size < a.sessions.size ? b : a));
    }
    const near = this.bySession.get(placement.near);
    if (!near) throw new Error(`no media session ${placement.near} to place ${sessionId} near`);
    return near;
  }

  /** Drops a session from the books if it is still on `slot`; says whether it was. */
  private forget(sessionId: string, slot: Slot): boolean {
    if (this.bySession.get(sessionId) !== slot) return false;
    slot.sessions.delete(sessionId);
    this.bySession.delete(sessionId);
    return true;
  }

  /**
   * Runs a command on the worker of the session it names. `transfer`: what moves with it to
   * that worker (a MessagePort).
   */
  send<C extends SessionCommand>(
    command: C,
    transfer?: readonly Transferable[],
  ): Promise<Results[C['type']]> {
    const slot = this.bySession.get(command.sessionId);
    if (!slot) return Promise.reject(new Error(`no media session ${command.sessionId}`));
    return slot.channel.request(command, transfer);
  }

  /**
   * Runs a command on the worker whose thread is `threadId` (what holds a conference's mix
   * there, whatever sessions it runs); rejected when no such worker runs.
   */
  sendToThread<C extends SessionCommand>(
    threadId: number,
    command: C,
    transfer?: readonly Transferable[],
  ): Promise<Results[C['type']]> {
    const slot = this.workers.find((w) => w.channel.threadId === threadId && w.channel.alive);
    if (!slot) return Promise.reject(new Error(`no media worker on thread ${threadId}`));
    return slot.channel.request(command, transfer);
  }

  /**
   * Closes a session (RTCP BYE, ports freed) without waiting for the worker: a failure comes
   * back as a `warning` event. Nothing to do for a session it does not have.
   */
  closeSession(sessionId: string, reason?: string): void {
    const slot = this.bySession.get(sessionId);
    if (!slot) return;
    this.forget(sessionId, slot);
    slot.channel.tell({ type: 'destroySession', sessionId, reason });
  }

  /** Closes a session (RTCP BYE, ports freed); resolves with its last stats. */
  async destroySession(
    sessionId: string,
    reason?: string,
  ): Promise<Results['destroySession'] | null> {
    const slot = this.bySession.get(sessionId);
    if (!slot) return null;
    slot.sessions.delete(sessionId);
    this.bySession.delete(sessionId);
    return slot.channel.request({ type: 'destroySession', sessionId, reason });
  }

  /** Each worker's sessions and heap (and the process's resident memory, the same from each). */
  stats(): Promise<Results['stats'][]> {
    this.start();
    return Promise.all(this.workers.map((w) => w.channel.request({ type: 'stats' })));
  }

  /** Kills the worker a session runs on, as a crash would (supervision tests). */
  async crashWorkerOf(sessionId: string): Promise<void> {
    await this.bySession.get(sessionId)?.channel.kill();
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.channel.close()));
  }

  private start(): void {
    while (this.workers.length < this.size) this.workers.push(this.spawn());
  }

  private spawn(): Slot {
    const slot = { sessions: new Set<string>(), ports: [] as number[] } as Slot;
    slot.started = new Promise((resolve) => (slot.markStarted = resolve));
    slot.channel = new MediaWorkerChannel(this.options.settings, {
      onEvent: (sessionId, event) => this.user.onEvent(sessionId, event),
      onCrash: (error) => {
        slot.markStarted();
        this.crashed(slot, error);
      },
      onLatency: (report) => this.user.onLatency?.(report),
      onFailed: ({ command, sessionId, error }) => {
        if (command === 'destroySession') {
          this.user.onEvent(sessionId, {
            type: 'warning',
            message: `media session did not close: ${error}`,
          });
        } else if (this.forget(sessionId, slot)) {
          this.user.onEvent(sessionId, {
            type: 'ended',
            cause: `media session did not open: ${error}`,
          });
        }
      },
      onPortsReady: (ports) => {
        slot.ports.push(...ports);
        slot.markStarted();
      },
    });
    return slot;
  }

  private crashed(slot: Slot, error: Error): void {
    const lost = [...slot.sessions];
    this.user.onWorkerCrash?.(error, lost, slot.channel.threadId);
    for (const sessionId of lost) {
      this.bySession.delete(sessionId);
      this.user.onEvent(sessionId, {
        type: 'ended',
        cause: `media worker crashed: ${error.message}`,
      });
    }
    // A new thread takes the dead one's place for the sessions to come.
    const index = this.workers.indexOf(slot);
    if (index !== -1) this.workers[index] = this.spawn();
  }
}
