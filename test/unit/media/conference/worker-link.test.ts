import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { WorkerConferences } from '../../../../src/media/conference/worker-conferences.js';
import type { MediaSession } from '../../../../src/media/pipeline/media-session.js';
import type { PlayoutSource } from '../../../../src/media/playout/playout-source.js';

/**
 * Two workers' conference books on one thread, each with a clock the test ticks: the room is
 * mixed on A; member L's leg runs on A, member M's on B, linked over a real MessageChannel.
 * Frames carry the step they were spoken at, so what a member hears says how late it is.
 */
class FakeSession {
  readonly taps = new Set<(frame: Int16Array) => void>();
  source: PlayoutSource | null = null;
  readonly rate = 8000;
  addTap(tap: (frame: Int16Array) => void): () => void {
    this.taps.add(tap);
    return () => this.taps.delete(tap);
  }
  play(source: PlayoutSource): Promise<boolean> {
    this.source = source;
    return new Promise(() => {});
  }
  /** Held while in a mix; counted so the test sees the link give it back. */
  paced = 0;
  paceByTicks(): () => void {
    this.paced++;
    return () => this.paced--;
  }
  speak(value: number): void {
    for (const tap of this.taps) tap(new Int16Array(160).fill(value));
  }
  /** The value heard in this tick's frame (0 for silence). */
  hear(): number {
    return this.source?.read(160)?.[80] ?? 0;
  }
}

function clock() {
  const ticks = new Set<() => void>();
  return {
    add(tick: () => void) {
      ticks.add(tick);
      return () => ticks.delete(tick);
    },
    tick: () => [...ticks].forEach((tick) => tick()),
  };
}

/** Lets the ports deliver what was posted. */
const delivered = () => new Promise((resolve) => setTimeout(resolve, 1));

async function room() {
  const [a, b] = [clock(), clock()];
  const [onA, onB] = [new WorkerConferences(a), new WorkerConferences(b)];
  const [l, l2, m] = [new FakeSession(), new FakeSession(), new FakeSession()];
  const sessions = { l, l2, m } as unknown as Record<string, MediaSession>;
  const flags = { conferenceId: 'c', muted: false, deaf: false } as const;
  onA.handle({ type: 'joinConference', sessionId: 'l', ...flags }, (id) => sessions[id]!);
  onA.handle({ type: 'joinConference', sessionId: 'l2', ...flags }, (id) => sessions[id]!);
  const { port1, port2 } = new MessageChannel();
  const { rate } = onB.handle(
    { type: 'linkConference', sessionId: 'm', port: port1 },
    (id) => sessions[id]!,
  );
  onA.handle(
    { type: 'joinConference', sessionId: 'm', ...flags, link: { port: port2, rate } },
    () => {
      throw new Error('not on this worker');
    },
  );
  await delivered();
  /** What each heard at each step, by who spoke: values are 1000 + step (m), 2000 + step (l). */
  const heard: { l: number[]; m: number[] } = { l: [], m: [] };
  let step = 0;
  /** One step: B's tick (m hears and speaks), the hop, A's tick 5 ms later, the hop back. */
  /** `b`: B's ticks in this step (0 while held up, more as it catches up). */
  let owed = 0;
  const run = async (options: { b?: number } = {}) => {
    step++;
    owed++;
    for (let n = options.b ?? 1; n > 0 && owed > 0; n--, owed--) {
      heard.m.push(m.hear());
      m.speak(1000 + step - owed + 1);
      b.tick();
    }
    await delivered();
    heard.l.push(l.hear());
    l.speak(2000 + step);
    l2.speak(0);
    a.tick();
    await delivered();
  };
  return { run, heard, onA, onB, m };
}

/** Steps late: what was heard at step s carried `value`, spoken at step value - base. */
const lateness = (heard: number[], base: number) =>
  heard.map((value, i) => (value > base && value < base + 1000 ? i + 1 - (value - base) : null));

describe('a conference member linked from another worker', () => {
  it('is mixed at the first tick of the mixing worker after its frame, and hears the mix at its own next tick', async () => {
    const { run, heard } = await room();
    for (let i = 0; i < 6; i++) await run();
    // l hears m's frame spoken in step s at step s + 1: as a member on its own worker would.
    expect(lateness(heard.l, 1000).slice(2)).toEqual([1, 1, 1, 1]);
    // m hears l's frame mixed at step s when its own worker next ticks, at step s + 1.
    expect(lateness(heard.m, 2000).slice(2)).toEqual([1, 1, 1, 1]);
  });

  it('drops frames of a standing queue after a burst, back to one step late', async () => {
    const { run, heard } = await room();
    for (let i = 0; i < 4; i++) await run();
    // B is held up for two steps, then catches up: three of its frames reach A at once.
    await run({ b: 0 });
    await run({ b: 0 });
    await run({ b: 3 });
    await run();
    const late = () => lateness(heard.l, 1000).filter((n): n is number => n !== null);
    expect(late().at(-1), 'two frames wait after the burst').toBe(3);
    for (let i = 0; i < 30; i++) await run();
    expect(late().slice(-5)).toEqual([1, 1, 1, 1, 1]);
  });

  it('leaves the mix when its leg leaves on its own worker, and the port closes', async () => {
    const { run, heard, onA, onB, m } = await room();
    for (let i = 0; i < 3; i++) await run();
    // While linked, the member's leg sends on its ticks, in step with the mix.
    expect(m.paced).toBe(1);
    expect(onB.handle({ type: 'leaveConference', sessionId: 'm' }, () => null as never)).toEqual({
      sessionId: 'm',
      left: true,
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    heard.l.length = 0;
    for (let i = 0; i < 3; i++) await run();
    // The first frame heard was mixed before it left.
    expect(heard.l).toEqual([1003, 0, 0]);
    expect(m.paced).toBe(0);
    const update = { type: 'updateConferenceMember', sessionId: 'm', muted: true } as const;
    expect(onA.handle(update, () => null as never).member).toBe(false);
  });
});
