import { PeriodicSweep } from '../core/periodic-sweep.js';
import type { Scheduler } from '../core/scheduler.js';
import type { State } from '../state/state.js';
import { removeExpiredCallRecords } from './call-record.js';

/** How often expired call records are swept away. */
const SWEEP_EVERY_MS = 60 * 60 * 1000;

/** One more kind of expired record the sweep removes: a batch at `now`, resolving with its count. */
export type ExpiredBatch = (now: number) => Promise<number>;

/**
 * Keeps call records for their 90 days: sweeps a tenant's expired records at start and then
 * every hour (reads never return them anyway; this frees the space). `alsoExpired` are swept in
 * the same pass (the recordings past their retention, registrations whose bindings expired).
 */
export class RecordRetention extends PeriodicSweep {
  constructor(
    state: State,
    tenant: string,
    scheduler: Scheduler,
    onError: (error: Error) => void,
    alsoExpired: ExpiredBatch[] = [],
  ) {
    super(
      async (now) => {
        let removed = await removeExpiredCallRecords(state.calls, tenant, now);
        for (const batch of alsoExpired) removed += await batch(now);
        return removed;
      },
      scheduler,
      SWEEP_EVERY_MS,
      onError,
    );
  }
}
