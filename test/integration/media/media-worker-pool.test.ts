import { afterEach, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../src/media/worker/protocol.js';
import { MediaWorkerPool } from '../../../src/media/worker/media-worker-pool.js';
import { until } from '../../support/wait.js';

/** Real worker threads: sessions spread across them, and a crash ends its sessions cleanly. */
let pool: MediaWorkerPool | null = null;
const base = 30000 + 2 * Math.floor(Math.random() * 5000);
const RTP_PORTS = { min: base, max: base + 199 };
const SPEC = { formats: [{ encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const }] };

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
    { size, settings: { rtpPorts: RTP_PORTS, rtpHost: '127.0.0.1', cname: 'pool-test' } },
  );
  return { pool, events, crashes };
}

describe('MediaWorkerPool', () => {
  it('spreads sessions across its worker threads, least loaded first', async () => {
    const { pool } = start(2);
    for (const id of ['a', 'b', 'c', 'd']) await pool.createSession(id, SPEC);
    const threads = ['a', 'b', 'c', 'd'].map((id) => pool.threadOf(id));
    expect(new Set(threads).size).toBe(2);
    expect(threads.filter((t) => t === threads[0])).toHaveLength(2);
    expect(await pool.destroySession('a')).toMatchObject({ existed: true });
    expect(await pool.destroySession('a')).toBeNull();
  });

  it('refuses a session id it already has, with a specific error', async () => {
    const { pool } = start(1);
    await pool.createSession('x', SPEC);
    await expect(pool.createSession('x', SPEC)).rejects.toThrow('session x already exists');
  });

  it('answers each of many commands given in one turn with its own reply, refusals included', async () => {
    const { pool } = start(1);
    await pool.createSession('first', SPEC);
    const ids = Array.from({ length: 20 }, (_, i) => `s${i}`);
    // All in one turn of the event loop: they reach the worker together, as one batch, and
    // the worker's answers come back together.
    const created = ids.map((id) => pool.createSession(id, SPEC));
    const refused = expect(
      pool.send({ type: 'bridge', sessionId: 'first', peerId: 'nobody' }),
    ).rejects.toThrow('no media session nobody on this worker');
    const stats = pool.send({ type: 'sessionStats', sessionId: 'first' });
    // Commands naming a session opened earlier in the same batch run once it is open.
    const bridged = pool.send({ type: 'bridge', sessionId: 's3', peerId: 's4' });
    const unbridged = pool.send({ type: 'unbridge', sessionId: 's3' });
    // Opened behind those waiting commands: what names it still waits for its open.
    const late = pool.createSession('late', SPEC);
    const lateStats = pool.send({ type: 'sessionStats', sessionId: 'late' });
    const opened = await Promise.all(created);
    await late;
    expect(await lateStats).toMatchObject({ packetsSent: expect.any(Number) });
    expect(await bridged).toEqual({ sessionId: 's3', peerId: 's4' });
    expect(await unbridged).toEqual({ sessionId: 's3', bridged: true });
    await refused;
    expect(await stats).toMatchObject({ packetsSent: expect.any(Number) });
    expect(opened.map((o) => o.sessionId)).toEqual(ids);
    expect(new Set(opened.map((o) => o.port)).size).toBe(ids.length);
    expect((await pool.stats())[0]?.sessions).toBe(ids.length + 2);
    const destroyed = await Promise.all(ids.map((id) => pool.destroySession(id)));
    expect(destroyed.map((d) => d?.sessionId)).toEqual(ids);
    expect((await pool.stats())[0]?.sessions).toBe(2);
  });

  it('ends every session of a crashed worker with a cause, and keeps serving', async () => {
    const { pool, events, crashes } = start(2);
    for (const id of ['a', 'b', 'c', 'd']) await pool.createSession(id, SPEC);
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
    await pool.createSession('e', SPEC);
    expect(pool.threadOf('e')).not.toBe(victim);
  });
});
