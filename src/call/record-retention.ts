import { PeriodicSweep } from '../core/periodic-sweep.js';
import type { Scheduler } from '../core/scheduler.js';
import type { State } from '../state/state.js';
import { removeExpiredCallRecords } from './call-record.js';

/** How often expired call records are swept away. */
const SWEEP_EVERY_MS = 60 * 60 * 1000;

/**
 * Keeps call records for their 90 days: sweeps a tenant's expired records at start and then
 * every hour (reads never return them anyway; this frees the space).
 */
export class RecordRetention extends PeriodicSweep {
  constructor(state: State, tenant: string, scheduler: Scheduler, onError: (error: Error) => void) {
    super(
      (now) => removeExpiredCallRecords(state.calls, tenant, now),
      scheduler,
      SWEEP_EVERY_MS,
      onError,
    );
  }
}
