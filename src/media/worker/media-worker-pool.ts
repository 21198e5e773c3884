import { availableParallelism } from 'node:os';
import type { MediaSessionSpec } from '../pipeline/media-session.js';
import { MediaWorkerChannel } from './media-worker-channel.js';
import type { Command, Results, SessionEvent, WorkerSettings } from './protocol.js';

export interface PoolUser {
  onEvent(sessionId: string, event: SessionEvent): void;
  /** Told of a worker's crash, once per worker, before its sessions are ended. */
  onWorkerCrash?(error: Error, sessions: string[]): void;
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
   */
  async createSession(
    sessionId: string,
    spec: MediaSessionSpec,
    placement: { near?: string } = {},
  ): Promise<Results['createSession']> {
    if (this.bySession.has(sessionId)) throw new Error(`session ${sessionId} already exists`);
    this.start();
    let slot = this.workers.reduce((a, b) => (b.sessions.size < a.sessions.size ? b : a));
    if (placement.near !== undefined) {
      const near = this.bySession.get(placement.near);
      if (!near) throw new Error(`no media session ${placement.near} to place ${sessionId} near`);
      slot = near;
    }
    slot.sessions.add(sessionId);
    this.bySession.set(sessionId, slot);
    try {
      return await slot.channel.request({ type: 'createSession', sessionId, spec });
    } catch (error) {
      slot.sessions.delete(sessionId);
      this.bySession.delete(sessionId);
      throw error;
    }
  }

  /** Runs a command on the worker of the session it names. */
  send<C extends SessionCommand>(command: C): Promise<Results[C['type']]> {
    const slot = this.bySession.get(command.sessionId);
    if (!slot) return Promise.reject(new Error(`no media session ${command.sessionId}`));
    return slot.channel.request(command);
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
    const slot = { sessions: new Set<string>() } as Slot;
    slot.channel = new MediaWorkerChannel(this.options.settings, {
      onEvent: (sessionId, event) => this.user.onEvent(sessionId, event),
      onCrash: (error) => this.crashed(slot, error),
    });
    return slot;
  }

  private crashed(slot: Slot, error: Error): void {
    const lost = [...slot.sessions];
    this.user.onWorkerCrash?.(error, lost);
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
