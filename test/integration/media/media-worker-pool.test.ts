import { afterEach, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../src/media/worker/protocol.js';
import { MediaWorkerPool } from '../../../src/media/worker/media-worker-pool.js';
import { until } from '../../support/wait.js';

/** Real worker threads: sessions spread across them, and a crash ends its sessions cleanly. */
let pool: MediaWorkerPool | null = null;

afterEach(async () => {
  await pool?.close();
  pool = null;
});

function start(size: number) {
  const events: [string, SessionEvent][] = [];
  const crashes: string[][] = [];
  pool = new MediaWorkerPool(
    {
      onEvent: (sessionId, event) => events.push([sessionId, event]),
      onWorkerCrash: (_error, sessions) => crashes.push(sessions),
    },
    size,
  );
  return { pool, events, crashes };
}

describe('MediaWorkerPool', () => {
  it('spreads sessions across its worker threads, least loaded first', async () => {
    const { pool } = start(2);
    for (const id of ['a', 'b', 'c', 'd']) await pool.createSession(id);
    const threads = ['a', 'b', 'c', 'd'].map((id) => pool.threadOf(id));
    expect(new Set(threads).size).toBe(2);
    expect(threads.filter((t) => t === threads[0])).toHaveLength(2);
    expect(await pool.destroySession('a')).toBe(true);
    expect(await pool.destroySession('a')).toBe(false);
  });

  it('refuses a session id it already has, with a specific error', async () => {
    const { pool } = start(1);
    await pool.createSession('x');
    await expect(pool.createSession('x')).rejects.toThrow('session x already exists');
  });

  it('ends every session of a crashed worker with a cause, and keeps serving', async () => {
    const { pool, events, crashes } = start(2);
    for (const id of ['a', 'b', 'c', 'd']) await pool.createSession(id);
    const victim = pool.threadOf('a');
    const onVictim = ['a', 'b', 'c', 'd'].filter((id) => pool.threadOf(id) === victim).sort();
    await pool.crashWorkerOf('a');
    await until(() => events.length === onVictim.length);
    expect(crashes).toEqual([expect.arrayContaining(onVictim)]);
    expect(events.map(([id]) => id).sort()).toEqual(onVictim);
    for (const [, event] of events) {
      expect(event).toMatchObject({
        type: 'ended',
        cause: expect.stringMatching(/^media worker crashed/),
      });
    }
    // The other sessions were not touched, and new sessions still start.
    const survivors = ['a', 'b', 'c', 'd'].filter((id) => !onVictim.includes(id));
    for (const id of survivors) expect(pool.threadOf(id)).not.toBeNull();
    await pool.createSession('e');
    expect(pool.threadOf('e')).not.toBe(victim);
  });
});
