import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { startStallWatch, type StallWatch } from '../../../bench/api/stall-watch.js';
import { until } from '../../support/wait.js';

describe('the stall watch', () => {
  let watch: StallWatch | null = null;
  afterEach(async () => {
    await watch?.stop();
    watch = null;
  });

  it('reports a stretch in which it could not run, as long as it was', async () => {
    watch = startStallWatch();
    await sleep(300);
    watch.take();
    // Held still for 150 ms, as a frozen machine would hold it.
    process.kill(watch.pid, 'SIGSTOP');
    await sleep(150);
    process.kill(watch.pid, 'SIGCONT');
    let stalls = watch.take();
    await until(() => {
      const more = watch!.take();
      stalls = {
        count: stalls.count + more.count,
        totalMs: stalls.totalMs + more.totalMs,
        longestMs: Math.max(stalls.longestMs, more.longestMs),
      };
      return stalls.longestMs > 0;
    });
    expect(stalls.longestMs).toBeGreaterThanOrEqual(140);
    expect(stalls.longestMs).toBeLessThan(2000);
    expect(stalls.totalMs).toBeGreaterThanOrEqual(140);
  });
});
