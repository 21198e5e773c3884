import { availableParallelism } from 'node:os';
import { MediaWorkerChannel } from './media-worker-channel.js';
import type { Results, SessionEvent } from './protocol.js';

export interface PoolUser {
  onEvent(sessionId: string, event: SessionEvent): void;
  /** Told of a worker's crash, once per worker, before its sessions are ended. */
  onWorkerCrash?(error: Error, sessions: string[]): void;
}

/**
 * The media workers: sessions are spread across them (the least loaded takes the next), and
 * a worker that dies ends each of its sessions with an `ended` event whose cause says so,
 * then is replaced. Nothing is ever dropped silently.
 */
export class MediaWorkerPool {
  private readonly workers: { channel: MediaWorkerChannel; sessions: Set<string> }[] = [];
  private readonly bySession = new Map<
    string,
    { channel: MediaWorkerChannel; sessions: Set<string> }
  >();

  constructor(
    private readonly user: PoolUser,
    size = Math.max(1, availableParallelism() - 1),
  ) {
    if (!Number.isInteger(size) || size < 1) {
      throw new RangeError(`Expected a pool size of at least 1 but received ${size}`);
    }
    for (let i = 0; i < size; i++) this.workers.push(this.spawn());
  }

  get size(): number {
    return this.workers.length;
  }

  /** The thread a session runs on (for tests and stats). */
  threadOf(sessionId: string): number | null {
    return this.bySession.get(sessionId)?.channel.threadId ?? null;
  }

  async createSession(sessionId: string): Promise<Results['createSession']> {
    if (this.bySession.has(sessionId)) throw new Error(`session ${sessionId} already exists`);
    const slot = this.workers.reduce((a, b) => (b.sessions.size < a.sessions.size ? b : a));
    slot.sessions.add(sessionId);
    this.bySession.set(sessionId, slot);
    try {
      return await slot.channel.request({ type: 'createSession', sessionId });
    } catch (error) {
      slot.sessions.delete(sessionId);
      this.bySession.delete(sessionId);
      throw error;
    }
  }

  async destroySession(sessionId: string): Promise<boolean> {
    const slot = this.bySession.get(sessionId);
    if (!slot) return false;
    slot.sessions.delete(sessionId);
    this.bySession.delete(sessionId);
    return (await slot.channel.request({ type: 'destroySession', sessionId })).existed;
  }

  /** Kills the worker a session runs on, as a crash would (supervision tests). */
  async crashWorkerOf(sessionId: string): Promise<void> {
    await this.bySession.get(sessionId)?.channel.kill();
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.channel.close()));
  }

  private spawn(): { channel: MediaWorkerChannel; sessions: Set<string> } {
    const slot = { sessions: new Set<string>() } as {
      channel: MediaWorkerChannel;
      sessions: Set<string>;
    };
    slot.channel = new MediaWorkerChannel({
      onEvent: (sessionId, event) => this.user.onEvent(sessionId, event),
      onCrash: (error) => this.crashed(slot, error),
    });
    return slot;
  }

  private crashed(
    slot: { channel: MediaWorkerChannel; sessions: Set<string> },
    error: Error,
  ): void {
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
