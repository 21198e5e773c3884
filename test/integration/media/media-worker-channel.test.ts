import { afterEach, describe, expect, it } from 'vitest';
import type { Worker } from 'node:worker_threads';
import { MediaWorkerChannel } from '../../../src/media/worker/media-worker-channel.js';
import type { QuietFailure, WorkerMessage } from '../../../src/media/worker/protocol.js';
import { until } from '../../support/wait.js';

/** A real media worker thread, driven through its channel as the pool drives it. */
let channel: MediaWorkerChannel | null = null;
const base = 36000 + 2 * Math.floor(Math.random() * 5000);
const SPEC = { formats: [{ encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const }] };

afterEach(async () => {
  await channel?.close();
  channel = null;
});

function start() {
  const ports: number[] = [];
  const failures: QuietFailure[] = [];
  channel = new MediaWorkerChannel(
    { rtpPorts: { min: base, max: base + 199 }, rtpHost: '127.0.0.1', cname: 'channel-test' },
    {
      onEvent: () => {},
      onCrash: () => {},
      onPortsReady: (ready) => ports.push(...ready),
      onFailed: (failure) => failures.push(failure),
    },
  );
  // Everything the worker sends back, to count its replies.
  const received: WorkerMessage[] = [];
  (channel as unknown as { worker: Worker }).worker.on('message', (batch: WorkerMessage[]) =>
    received.push(...batch),
  );
  const replies = () => received.filter((message) => message.kind === 'reply');
  return { channel, ports, failures, replies };
}

describe('MediaWorkerChannel', () => {
  it('sends a quiet command no reply when it succeeds: the commands behind it find its work done', async () => {
    const { channel, ports, failures, replies } = start();
    await until(() => ports.length > 0);
    const port = ports.shift()!;

    expect(channel.tell({ type: 'createSession', sessionId: 'a', spec: SPEC, port })).toBe(true);
    const stats = await channel.request({ type: 'sessionStats', sessionId: 'a' });
    expect(stats).toMatchObject({ packetsSent: 0 });
    // The one reply is the stats'.
    expect(replies()).toEqual([expect.objectContaining({ ok: true, result: stats })]);

    expect(channel.tell({ type: 'destroySession', sessionId: 'a', reason: 'done' })).toBe(true);
    await expect(channel.request({ type: 'sessionStats', sessionId: 'a' })).rejects.toThrow(
      'no media session a',
    );
    // And the next the refusal of the stats of a session that is gone.
    expect(replies()).toEqual([
      expect.objectContaining({ ok: true, result: stats }),
      expect.objectContaining({ ok: false, error: 'no media session a on this worker' }),
    ]);
    expect(failures).toEqual([]);
  });

  it('reports a quiet command that fails, naming the command, its session and why', async () => {
    const { channel, ports, failures, replies } = start();
    await until(() => ports.length > 0);
    // Outside the worker's range: never bound by it, so never announced.
    const notAnnounced = base + 200;

    channel.tell({ type: 'createSession', sessionId: 'b', spec: SPEC, port: notAnnounced });
    await until(() => failures.length > 0);
    expect(failures).toEqual([
      {
        kind: 'failed',
        command: 'createSession',
        sessionId: 'b',
        error: `no reserved RTP port pair on ${notAnnounced}`,
      },
    ]);
    expect(replies()).toEqual([]);
    await expect(channel.request({ type: 'sessionStats', sessionId: 'b' })).rejects.toThrow(
      'no media session b',
    );
  });

  it('does not send a quiet command to a thread that is gone, and says so', async () => {
    const { channel, ports } = start();
    await until(() => ports.length > 0);
    await channel.kill();
    await until(() => !channel.alive);
    expect(channel.tell({ type: 'destroySession', sessionId: 'c' })).toBe(false);
  });
});
