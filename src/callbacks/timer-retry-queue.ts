import { systemScheduler, type Scheduler, type TimerHandle } from '../core/scheduler.js';
import type { RetryHandler, RetryQueue } from './retry-queue.js';

/**
 * The embedded mode's retry queue: in-process timers. Retries still pending when the process
 * stops are lost; the Redis-backed queue is the one that survives a restart.
 */
export class TimerRetryQueue<T> implements RetryQueue<T> {
  private readonly timers = new Set<TimerHandle>();
  private readonly running = new Set<Promise<void>>();
  /** Jobs that fell due before start(). */
  private readonly due: T[] = [];
  /** Jobs scheduled with no delay, run together by one timer. */
  private readonly dueNow: T[] = [];
  private handler: RetryHandler<T> | undefined;
  private closed = false;

  /** `scheduler` tells the time: the gateway's, or a test's that moves by hand. */
  constructor(private readonly scheduler: Scheduler = systemScheduler) {}

  async schedule(job: T, delayMs: number): Promise<void> {
    if (this.closed) throw new Error('Cannot schedule a retry: the retry queue is closed');
    // A copy, as the durable queue stores a serialised copy: later changes to `job` do not leak.
    const data = structuredClone(job);
    if (delayMs <= 0) {
      // Jobs due now (every message queued for sending) share one timer.
      this.dueNow.push(data);
      if (this.dueNow.length === 1)
        this.after(0, () => this.dueNow.splice(0).forEach((j) => this.run(j)));
      return;
    }
    this.after(delayMs, () => this.run(data));
  }

  private after(delayMs: number, run: () => void): void {
    const timer = this.scheduler.after(delayMs, () => {
      this.timers.delete(timer);
      run();
    });
    this.timers.add(timer);
  }

  start(handler: RetryHandler<T>): void {
    if (this.handler) throw new Error('The retry queue is already started');
    this.handler = handler;
    for (const job of this.due.splice(0)) this.run(job);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) timer.cancel();
    this.timers.clear();
    this.due.length = 0;
    this.dueNow.length = 0;
    await Promise.all(this.running);
  }

  private run(job: T): void {
    const handler = this.handler;
    if (!handler) {
      this.due.push(job);
      return;
    }
    // Handlers report their own failures; a rejection here must not become unhandled.
    const running: Promise<void> = handler(job)
      .catch(() => undefined)
      .finally(() => this.running.delete(running));
    this.running.add(running);
  }
}
