import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSocketFloor, measureSocketFloor } from '../../../bench/streams/socket-floor.js';

describe('the socket floor of bench:streams', () => {
  const built = buildSocketFloor();
  afterAll(() => {
    if ('dir' in built) rmSync(built.dir, { recursive: true, force: true });
  });

  it('relays every caller datagram to the server and each reply back as a datagram', async () => {
    if ('skipped' in built) throw new Error(built.skipped);
    const floor = await measureSocketFloor(built.binary, 5, 1);
    // 5 callers, a frame each every 20 ms for the settling start and the second measured.
    expect(floor.sent).toBeGreaterThanOrEqual(5 * 140);
    // Every datagram back, but for the last frame of a caller on a machine slow to answer.
    expect(floor.received).toBeLessThanOrEqual(floor.sent);
    expect(floor.received).toBeGreaterThanOrEqual(floor.sent - 5);
    expect(floor.streams).toBe(5);
    expect(floor.cpuPercent).toBeGreaterThanOrEqual(floor.systemPercent);
    expect(floor.cpuPercentPerStream).toBe(Math.round((floor.cpuPercent / 5) * 1000) / 1000);
  }, 20_000);
});
