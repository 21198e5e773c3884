import type { Clock } from './clock.js';

export interface TimerHandle {
  cancel(): void;
}

/** A clock that can also run something later; tests drive it by hand. */
export interface Scheduler extends Clock {
  after(ms: number, run: () => void): TimerHandle;
}

/** Resolves after `ms` of the scheduler's time. */
export function pause(scheduler: Scheduler, ms: number): Promise<void> {
  return new Promise((resolve) => scheduler.after(ms, resolve));
}

export const systemScheduler: Scheduler = {
  now: () => Date.now(),
  after: (ms, run) => {
    const timer = setTimeout(run, ms);
    timer.unref?.();
    return { cancel: () => clearTimeout(timer) };
  },
};

interface Pending {
  at: number;
  /** Ties break in the order timers were set. */
  id: number;
  run: () => void;
  cancelled: boolean;
}

/**
 * A Scheduler whose time moves only when a test calls advance(). Timers sit in a binary heap,
 * so tests that hold many thousands of them (fuzzing, load) stay fast.
 */
export class ManualScheduler implements Scheduler {
  private current: number;
  private sequence = 0;
  private readonly heap: Pending[] = [];
  private live = 0;

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  after(ms: number, run: () => void): TimerHandle {
    const entry: Pending = {
      at: this.current + Math.max(0, ms),
      id: this.sequence++,
      run,
      cancelled: false,
    };
    this.push(entry);
    this.live++;
    return {
      cancel: () => {
        if (entry.cancelled) return;
        entry.cancelled = true;
        this.live--;
      },
    };
  }

  /**
   * Moves time forward, running every timer that falls due, in time order; timers already
   * overdue (after stall()) run at once, late.
   */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const next = this.heap[0];
      if (!next || next.at > target) break;
      this.pop();
      if (next.cancelled) continue;
      next.cancelled = true;
      this.live--;
      this.current = Math.max(this.current, next.at);
      next.run();
    }
    this.current = target;
  }

  /**
   * The process stands still for `ms`: time moves on and no timer runs, so whatever the test
   * does next sees the timers that fell due meanwhile still waiting, as a busy event loop does.
   */
  stall(ms: number): void {
    this.current += ms;
  }

  get timersPending(): number {
    return this.live;
  }

  private push(entry: Pending): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!earlier(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let first = i;
      if (left < heap.length && earlier(heap[left]!, heap[first]!)) first = left;
      if (right < heap.length && earlier(heap[right]!, heap[first]!)) first = right;
      if (first === i) break;
      [heap[i], heap[first]] = [heap[first]!, heap[i]!];
      i = first;
    }
  }
}

const earlier = (a: Pending, b: Pending): boolean => a.at < b.at || (a.at === b.at && a.id < b.id);
