import type { Clock } from './clock.js';

export interface TimerHandle {
  cancel(): void;
}

/** A clock that can also run something later; tests drive it by hand. */
export interface Scheduler extends Clock {
  after(ms: number, run: () => void): TimerHandle;
}

export const systemScheduler: Scheduler = {
  now: () => Date.now(),
  after: (ms, run) => {
    const timer = setTimeout(run, ms);
    timer.unref?.();
    return { cancel: () => clearTimeout(timer) };
  },
};

/** A Scheduler whose time moves only when a test calls advance(). */
export class ManualScheduler implements Scheduler {
  private current: number;
  private sequence = 0;
  private readonly pending = new Map<number, { at: number; run: () => void }>();

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  after(ms: number, run: () => void): TimerHandle {
    const id = this.sequence++;
    this.pending.set(id, { at: this.current + Math.max(0, ms), run });
    return { cancel: () => this.pending.delete(id) };
  }

  /** Moves time forward, running every timer that falls due, in time order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      let next: [number, { at: number; run: () => void }] | undefined;
      for (const entry of this.pending) {
        if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
      }
      if (!next) break;
      this.pending.delete(next[0]);
      this.current = next[1].at;
      next[1].run();
    }
    this.current = target;
  }

  get timersPending(): number {
    return this.pending.size;
  }
}
