import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSocketFloor, measureSocketFloor } from '../../../bench/streams/socket-floor.js';

describe('the socket floor of bench:streams', () => {
  const built = buildSocketFloor();
  afterAll(() => {
    if ('dir' in built) rmSync(built.dir, { recursive: true, force: true });
  });

  // Every datagram back, but for a caller's last frame still in flight on a machine slow to
  // answer, and on Node a caller's first frame, which may come before its connection said
  // which stream it is.
  it.each([
    { relay: 'c' as const, missing: 5 },
    { relay: 'node' as const, missing: 10 },
  ])(
    'relays ($relay) every caller datagram to the server and each reply back as a datagram',
    async ({ relay, missing }) => {
      if ('skipped' in built) throw new Error(built.skipped);
      const floor = await measureSocketFloor(built.binary, 5, 1, relay);
      // 5 callers, a frame each every 20 ms for the settling start and the second measured.
      expect(floor.sent).toBeGreaterThanOrEqual(5 * 140);
      expect(floor.received).toBeLessThanOrEqual(floor.sent);
      expect(floor.received).toBeGreaterThanOrEqual(floor.sent - missing);
      expect(floor.relay).toBe(relay);
      expect(floor.streams).toBe(5);
      expect(floor.cpuPercent).toBeGreaterThanOrEqual(floor.systemPercent);
      expect(floor.cpuPercentPerStream).toBe(Math.round((floor.cpuPercent / 5) * 1000) / 1000);
    },
    30_000,
  );
});
