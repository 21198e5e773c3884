import type { Scheduler, TimerHandle } from '../../../core/scheduler.js';

/**
 * Watches for consent (RFC 7675) from the side that only answers: the peer's checks are its
 * consent, and none for `timeoutMs` means it is gone. One timer at a time, moved only when it
 * falls due, so that a check costs a clock read rather than a timer.
 */
export class ConsentWatch {
  private last: number;
  private timer: TimerHandle | null = null;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly timeoutMs: number,
    private readonly onLost: (silentMs: number) => void,
  ) {
    this.last = scheduler.now();
    this.arm();
  }

  /** A valid check came in. */
  refresh(): void {
    this.last = this.scheduler.now();
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  private arm(): void {
    const due = this.last + this.timeoutMs - this.scheduler.now();
    this.timer = this.scheduler.after(due, () => {
      const silent = this.scheduler.now() - this.last;
      if (silent >= this.timeoutMs) {
        this.timer = null;
        this.onLost(silent);
      } else this.arm();
    });
  }
}
