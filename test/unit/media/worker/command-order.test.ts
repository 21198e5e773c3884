import { describe, expect, it } from 'vitest';
import { CommandOrder } from '../../../../src/media/worker/command-order.js';
import type { Command, Results } from '../../../../src/media/worker/protocol.js';

const SPEC = { formats: [{ encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const }] };
const create = (sessionId: string): Command => ({ type: 'createSession', sessionId, spec: SPEC });
const stats = (sessionId: string): Command => ({ type: 'sessionStats', sessionId });

/** A worker whose opens settle only when the test says so; it logs what starts when. */
function worker() {
  const started: string[] = [];
  const opens = new Map<string, { ok(): void; fail(): void }>();
  const order = new CommandOrder((command) => {
    const name = `${command.type} ${'sessionId' in command ? command.sessionId : ''}`.trim();
    started.push(name);
    if (command.type !== 'createSession') return Promise.resolve({} as Results[Command['type']]);
    return new Promise((resolve, reject) => {
      opens.set(command.sessionId, {
        ok: () => resolve({ sessionId: command.sessionId, port: 0, rtcpPort: 1 }),
        fail: () => reject(new Error('no port')),
      });
    });
  });
  return { order, started, opens };
}

describe('CommandOrder', () => {
  it('starts each command at once while none names a session being opened', () => {
    const { order, started } = worker();
    void order.handle(create('a'));
    void order.handle(create('b'));
    void order.handle(stats('c'));
    void order.handle({ type: 'stats' });
    expect(started).toEqual(['createSession a', 'createSession b', 'sessionStats c', 'stats']);
  });

  it('holds a command naming a session being opened, and those behind it, until the open settles', async () => {
    const { order, started, opens } = worker();
    void order.handle(create('a'));
    void order.handle(create('b'));
    const bridged = order.handle({ type: 'bridge', sessionId: 'a', peerId: 'b' });
    void order.handle({ type: 'unbridge', sessionId: 'a' });
    void order.handle({ type: 'stats' });
    expect(started).toEqual(['createSession a', 'createSession b']);
    opens.get('a')?.ok();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toHaveLength(2);
    opens.get('b')?.ok();
    await bridged;
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([
      'createSession a',
      'createSession b',
      'bridge a',
      'unbridge a',
      'stats',
    ]);
  });

  it('holds a command naming a session whose open was itself held, until that open settles', async () => {
    const { order, started, opens } = worker();
    void order.handle(create('a'));
    void order.handle(stats('a'));
    void order.handle(create('b'));
    const named = order.handle(stats('b'));
    opens.get('a')?.ok();
    await new Promise((resolve) => setImmediate(resolve));
    // b's open started once a was open; what names b waits for it.
    expect(started).toEqual(['createSession a', 'sessionStats a', 'createSession b']);
    opens.get('b')?.ok();
    await named;
    expect(started.at(-1)).toBe('sessionStats b');
  });

  it('lets a held command run, to fail on its own, when the open fails', async () => {
    const { order, started, opens } = worker();
    void order.handle(create('a')).catch(() => undefined);
    const held = order.handle(stats('a'));
    opens.get('a')?.fail();
    await held;
    expect(started).toEqual(['createSession a', 'sessionStats a']);
    // Nothing waits any more: the next command starts at once.
    void order.handle(stats('z'));
    expect(started.at(-1)).toBe('sessionStats z');
  });
});
