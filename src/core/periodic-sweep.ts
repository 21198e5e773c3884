import type { Scheduler, TimerHandle } from './scheduler.js';

/**
 * Runs a sweep at start and then every `everyMs`: `batch` removes what is due in one batch and
 * says how many it removed; batches run until one removes nothing. Failures are reported and
 * the next sweep runs on time.
 */
export class PeriodicSweep {
  private timer: TimerHandle | null = null;
  private stopped = false;

  constructor(
    private readonly batch: (now: number) => Promise<number>,
    private readonly scheduler: Scheduler,
    private readonly everyMs: number,
    private readonly onError: (error: Error) => void,
  ) {}

  start(): void {
    void this.sweep();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** Sweeps now; resolves with how many went. */
  async sweep(): Promise<number> {
    let removed = 0;
    try {
      for (;;) {
        const batch = await this.batch(this.scheduler.now());
        removed += batch;
        if (batch === 0 || this.stopped) break;
      }
    } catch (error) {
      this.onError(error as Error);
    }
    if (!this.stopped) this.timer = this.scheduler.after(this.everyMs, () => void this.sweep());
    return removed;
  }
}
