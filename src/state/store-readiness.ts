import { StoreUnavailable } from '../core/errors.js';
import { pause, type Scheduler } from '../core/scheduler.js';
import type { DocumentStore } from './document-store.js';

const PROBE = { kind: 'marker', tenant: 'global', id: 'store-probe' } as const;

/** Tries again after this long at first, then twice as long each time, up to MAX_DELAY_MS. */
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 2000;
/** How often a wait that goes on is told again. */
const TELL_EVERY_MS = 10_000;

export interface StoreWait {
  /** How long to wait at most; 0 tries once. */
  waitMs: number;
  /** Told at the first refusal, then every 10 s while the wait goes on. */
  onWait(error: StoreUnavailable, waitedMs: number): void;
  scheduler: Scheduler;
}

/**
 * Resolves once the store takes a write. Redis may still be starting, loading its data or
 * syncing a replica (whose master then refuses writes) when a gateway starts beside it, and a
 * start that failed at once would leave it to a supervisor to try again. Each try writes one
 * small document; a refusal (StoreUnavailable) is tried again, 0.25 s later and then up to 2 s
 * apart, until `waitMs` has passed; then the last refusal is thrown, saying how long it waited.
 * Any other error is thrown at once.
 */
export async function waitForStore(store: DocumentStore, wait: StoreWait): Promise<void> {
  const { scheduler } = wait;
  const started = scheduler.now();
  let delay = FIRST_DELAY_MS;
  let toldAt: number | null = null;
  for (;;) {
    try {
      await store.put(
        PROBE.kind,
        PROBE.tenant,
        PROBE.id,
        { at: new Date(scheduler.now()).toISOString() },
        { score: 0, indexes: [], unique: [] },
      );
      return;
    } catch (error) {
      if (!(error instanceof StoreUnavailable)) throw error;
      const waited = scheduler.now() - started;
      if (waited + delay > wait.waitMs) {
        if (toldAt === null) throw error;
        throw new StoreUnavailable(
          `no write taken within ${Math.round(waited / 1000)} s; the last refusal: ${error.detail}`,
        );
      }
      if (toldAt === null || waited - toldAt >= TELL_EVERY_MS) {
        wait.onWait(error, waited);
        toldAt = waited;
      }
      await pause(scheduler, delay);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }
}
