import type { Scheduler, TimerHandle } from '../../core/scheduler.js';

/**
 * The one 20 ms timer of a worker: every registered leg is ticked from it, so a thousand
 * calls cost one timer, not a thousand. Ticks are due at start + n * period; a late tick is
 * followed by the ones it missed, so no leg drifts behind real time.
 */
export class FrameClock {
  private readonly tickers = new Set<(at: number) => void>();
  private timer: TimerHandle | null = null;
  private start = 0;
  private ticks = 0;

  constructor(
    private readonly scheduler: Scheduler,
    readonly periodMs = 20,
    /** A leg whose tick throws is reported here; the other legs tick on. */
    private readonly onError: (error: Error) => void = () => {},
  ) {}

  get size(): number {
    return this.tickers.size;
  }

  /** The time the ticks are counted in (their scheduler's). */
  now(): number {
    return this.scheduler.now();
  }

  /**
   * When the next tick is due. Before now while the worker is behind its clock (it stood still,
   * and the ticks it owes have not run yet): the time its legs are at.
   */
  get nextTickAt(): number {
    return this.start + (this.ticks + 1) * this.periodMs;
  }

  /**
   * Ticks `tick` every period until the returned function is called; `at` is the time the
   * tick was due (a late tick's catch-up ticks come at once, each with its own due time).
   */
  add(tick: (at: number) => void): () => void {
    this.tickers.add(tick);
    if (this.timer === null) {
      this.start = this.scheduler.now();
      this.ticks = 0;
      this.schedule();
    }
    return () => {
      this.tickers.delete(tick);
      if (this.tickers.size === 0) this.halt();
    };
  }

  halt(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  private schedule(): void {
    const due = this.start + (this.ticks + 1) * this.periodMs;
    this.timer = this.scheduler.after(Math.max(0, due - this.scheduler.now()), () => this.fire());
  }

  private fire(): void {
    const now = this.scheduler.now();
    // Every period that has passed gets its tick.
    while (this.start + (this.ticks + 1) * this.periodMs <= now) {
      this.ticks++;
      const at = this.start + this.ticks * this.periodMs;
      for (const tick of [...this.tickers]) {
        try {
          tick(at);
        } catch (error) {
          this.onError(error as Error);
        }
      }
    }
    if (this.tickers.size > 0) this.schedule();
    else this.timer = null;
  }
}
