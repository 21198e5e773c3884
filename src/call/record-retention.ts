import type { Scheduler, TimerHandle } from '../core/scheduler.js';
import type { State } from '../state/state.js';
import { removeExpiredCallRecords } from './call-record.js';

/** How often expired call records are swept away. */
const SWEEP_EVERY_MS = 60 * 60 * 1000;

/**
 * Keeps call records for their 90 days: sweeps a tenant's expired records at start and then
 * every hour (reads never return them anyway; this frees the space).
 */
export class RecordRetention {
  private timer: TimerHandle | null = null;
  private stopped = false;

  constructor(
    private readonly state: State,
    private readonly tenant: string,
    private readonly scheduler: Scheduler,
    private readonly onError: (error: Error) => void,
  ) {}

  start(): void {
    void this.sweep();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** Removes expired records in batches until none is left; resolves with how many went. */
  async sweep(): Promise<number> {
    let removed = 0;
    try {
      for (;;) {
        const batch = await removeExpiredCallRecords(
          this.state.calls,
          this.tenant,
          this.scheduler.now(),
        );
        removed += batch;
        if (batch === 0 || this.stopped) break;
      }
    } catch (error) {
      this.onError(error as Error);
    }
    if (!this.stopped) this.timer = this.scheduler.after(SWEEP_EVERY_MS, () => void this.sweep());
    return removed;
  }
}
