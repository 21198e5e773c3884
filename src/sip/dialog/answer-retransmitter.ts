import type { Scheduler, TimerHandle } from '../../core/scheduler.js';
import type { TimerSettings } from '../transaction/timers.js';

/**
 * RFC 3261 13.3.1.4: the UAS core's retransmission of its 2xx to an INVITE. "The 2xx response
 * is passed to the transport with an interval that starts at T1 seconds and doubles for each
 * retransmission until it reaches T2 seconds" and stops when the ACK arrives, whatever the
 * transport (a hop beyond the first may be UDP). After 64*T1 without an ACK it gives up.
 */
export class AnswerRetransmitter {
  private timer: TimerHandle | null = null;
  private deadline: TimerHandle | null = null;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly timers: TimerSettings,
    private readonly resend: () => void,
    private readonly giveUp: () => void,
  ) {}

  /** Call after the 2xx went out the first time. */
  start(): void {
    this.schedule(this.timers.t1);
    this.deadline = this.scheduler.after(64 * this.timers.t1, () => {
      this.stop();
      this.giveUp();
    });
  }

  /** The ACK arrived (or the dialog ended). */
  stop(): void {
    this.timer?.cancel();
    this.deadline?.cancel();
    this.timer = null;
    this.deadline = null;
  }

  get running(): boolean {
    return this.deadline !== null;
  }

  private schedule(interval: number): void {
    this.timer = this.scheduler.after(interval, () => {
      this.resend();
      this.schedule(Math.min(2 * interval, this.timers.t2));
    });
  }
}
