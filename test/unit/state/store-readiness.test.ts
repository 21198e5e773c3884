import { describe, expect, it } from 'vitest';
import { StoreUnavailable } from '../../../src/core/errors.js';
import type { Scheduler } from '../../../src/core/scheduler.js';
import type { DocumentStore } from '../../../src/state/document-store.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import { waitForStore } from '../../../src/state/store-readiness.js';

/**
 * A real embedded store whose first `refusals` writes are refused as an unreachable Redis's
 * would be, on a clock that only the waits move.
 */
function refusing(refusals: number, error: Error = new StoreUnavailable('connect ECONNREFUSED')) {
  const store = new EmbeddedStore(null);
  let left = refusals;
  const flaky = Object.assign(Object.create(store) as DocumentStore, {
    put: (...args: Parameters<DocumentStore['put']>) => {
      if (left-- > 0) return Promise.reject(error);
      return store.put(...args);
    },
  });
  let now = 0;
  const sleeps: number[] = [];
  const told: number[] = [];
  // Time moves only by the waits, each of which ends at once.
  const scheduler: Scheduler = {
    now: () => now,
    after: (ms, run) => {
      sleeps.push(ms);
      now += ms;
      queueMicrotask(run);
      return { cancel: () => undefined };
    },
  };
  const wait = (waitMs: number) =>
    waitForStore(flaky, {
      waitMs,
      onWait: (_error, waitedMs) => told.push(waitedMs),
      scheduler,
    });
  return { store, wait, sleeps, told };
}

describe('waitForStore', () => {
  it('tries again 0.25 s later, then twice as long up to 2 s apart, and resolves once a write is taken', async () => {
    const { store, wait, sleeps, told } = refusing(9);
    await wait(60_000);
    expect(sleeps).toEqual([250, 500, 1000, 2000, 2000, 2000, 2000, 2000, 2000]);
    // Told at the first refusal and again at the first one 10 s or more after it.
    expect(told).toEqual([0, 11_750]);
    expect(await store.get('marker', 'global', 'store-probe')).toMatchObject({
      at: expect.any(String),
    });
  });

  it('gives up once the wait would pass its bound, saying how long it waited and why', async () => {
    const { wait, sleeps } = refusing(Infinity);
    const failure = await wait(5000).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StoreUnavailable);
    expect((failure as StoreUnavailable).detail).toBe(
      'no write taken within 4 s; the last refusal: connect ECONNREFUSED',
    );
    expect(sleeps).toEqual([250, 500, 1000, 2000]);
  });

  it('tries once with no wait, and throws anything but unavailability at once', async () => {
    const once = refusing(1);
    await expect(once.wait(0)).rejects.toThrow(StoreUnavailable);
    expect(once.sleeps).toEqual([]);
    const broken = refusing(1, new TypeError('a bug, not an outage'));
    await expect(broken.wait(60_000)).rejects.toThrow('a bug, not an outage');
    expect(broken.sleeps).toEqual([]);
  });
});
