import type { Scheduler, TimerHandle } from '../../../core/scheduler.js';

/**
 * Watches for consent (RFC 7675) from the side that only answers: the peer's checks are its
 * consent, and none for `timeoutMs` means it is gone. It runs from start() or the first valid
 * check, whichever comes first: a peer checks only once it holds both descriptions, so the
 * time before (a browser ringing) is no silence of its. One timer at a time, moved only when
 * it falls due, so that a check costs a clock read rather than a timer.
 */
export class ConsentWatch {
  private last = 0;
  private timer: TimerHandle | null = null;
  private state: 'waiting' | 'watching' | 'stopped' = 'waiting';

  constructor(
    private readonly scheduler: Scheduler,
    private readonly timeoutMs: number,
    private readonly onLost: (silentMs: number) => void,
  ) {}

  /** From now on the peer checks: its silence counts (a no-op once watching or stopped). */
  start(): void {
    if (this.state !== 'waiting') return;
    this.state = 'watching';
    this.last = this.scheduler.now();
    this.arm();
  }

  /** A valid check came in. */
  refresh(): void {
    if (this.state === 'waiting') this.start();
    else this.last = this.scheduler.now();
  }

  stop(): void {
    this.state = 'stopped';
    this.timer?.cancel();
    this.timer = null;
  }

  private arm(): void {
    const due = this.last + this.timeoutMs - this.scheduler.now();
    this.timer = this.scheduler.after(due, () => {
      const silent = this.scheduler.now() - this.last;
      if (silent >= this.timeoutMs) {
        this.timer = null;
        this.state = 'stopped';
        this.onLost(silent);
      } else this.arm();
    });
  }
}
