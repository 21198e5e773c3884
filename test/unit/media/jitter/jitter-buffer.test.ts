import { describe, expect, it } from 'vitest';
import {
  JitterBuffer,
  type JitterOutput,
  type JitterPacket,
} from '../../../../src/media/jitter/jitter-buffer.js';
import { seededRandom } from '../../../support/prng.js';

const packet = (seq: number): JitterPacket => ({
  sequenceNumber: seq & 0xffff,
  timestamp: (seq * 160) >>> 0,
  payload: Uint8Array.of(seq & 0xff, (seq >> 8) & 0xff),
});

const describeOutput = (out: JitterOutput): string =>
  out.kind === 'empty' ? 'empty' : `${out.kind}:${out.seq}`;

function pulls(buffer: JitterBuffer, count: number): string[] {
  return Array.from({ length: count }, () => describeOutput(buffer.pull()));
}

describe('JitterBuffer', () => {
  it('waits for its depth, then plays in order', () => {
    const buffer = new JitterBuffer({ minDepth: 2 });
    buffer.push(packet(10));
    expect(pulls(buffer, 1)).toEqual(['empty']);
    buffer.push(packet(11));
    buffer.push(packet(12));
    expect(pulls(buffer, 3)).toEqual(['frame:10', 'frame:11', 'frame:12']);
  });

  it('reorders and drops duplicates', () => {
    const buffer = new JitterBuffer({ minDepth: 3 });
    for (const seq of [3, 1, 3, 2, 1]) buffer.push(packet(seq));
    expect(buffer.stats.duplicates).toBe(2);
    expect(pulls(buffer, 3)).toEqual(['frame:1', 'frame:2', 'frame:3']);
  });

  it('signals a missing frame as lost, dated one frame after the last', () => {
    const buffer = new JitterBuffer({ minDepth: 2 });
    for (const seq of [1, 2, 4, 5]) buffer.push(packet(seq));
    const out = [buffer.pull(), buffer.pull(), buffer.pull(), buffer.pull(), buffer.pull()];
    expect(out.map(describeOutput)).toEqual(['frame:1', 'frame:2', 'lost:3', 'frame:4', 'frame:5']);
    expect(out[2]).toEqual({ kind: 'lost', seq: 3, ts: 480 });
    expect(buffer.stats.lost).toBe(1);
  });

  it('drops a packet that comes after its turn and grows a frame deeper', () => {
    const buffer = new JitterBuffer({ minDepth: 2 });
    for (const seq of [1, 2, 4]) buffer.push(packet(seq));
    expect(pulls(buffer, 3)).toEqual(['frame:1', 'frame:2', 'lost:3']);
    expect(buffer.push(packet(3))).toBe('late');
    expect(buffer.stats).toMatchObject({ late: 1, depth: 3 });
    buffer.push(packet(5));
    // One frame of room is made before playing on.
    expect(pulls(buffer, 3)).toEqual(['empty', 'frame:4', 'frame:5']);
  });

  it('plays across the 16-bit sequence wraparound', () => {
    const buffer = new JitterBuffer({ minDepth: 2 });
    for (const seq of [65534, 0, 65535, 1]) buffer.push(packet(seq));
    expect(pulls(buffer, 4)).toEqual(['frame:65534', 'frame:65535', 'frame:0', 'frame:1']);
  });

  it('after an underrun the network caused, rebuffers one frame deeper and counts what it skipped as lost', () => {
    const buffer = new JitterBuffer({ minDepth: 1 });
    buffer.push(packet(1));
    expect(pulls(buffer, 2)).toEqual(['frame:1', 'empty']);
    expect(buffer.stats).toMatchObject({ underruns: 1, depth: 1 });
    // Packets 2 and 3 are missing: the network, not a pause of the sender's.
    buffer.push(packet(4));
    expect(pulls(buffer, 1)).toEqual(['empty']);
    expect(buffer.stats.depth).toBe(2);
    buffer.push(packet(5));
    expect(pulls(buffer, 2)).toEqual(['frame:4', 'frame:5']);
    expect(buffer.stats.lost).toBe(2);
    expect(buffer.push(packet(2))).toBe('late');
  });

  it('holds at most its capacity, dropping the oldest', () => {
    const buffer = new JitterBuffer({ minDepth: 2, maxDepth: 4, capacity: 4 });
    for (let seq = 0; seq < 6; seq++) buffer.push(packet(seq));
    expect(buffer.stats).toMatchObject({ buffered: 4, discarded: 2 });
    expect(pulls(buffer, 4)).toEqual(['frame:2', 'frame:3', 'frame:4', 'frame:5']);
  });

  it('shrinks slowly after a calm stretch, skipping one frame', () => {
    const buffer = new JitterBuffer({ minDepth: 1, shrinkAfterFrames: 10 });
    buffer.push(packet(0));
    buffer.pull();
    buffer.pull(); // underrun: depth 2
    let seq = 1;
    for (; seq < 4; seq++) buffer.push(packet(seq));
    expect(buffer.pull()).toMatchObject({ kind: 'frame', seq: 1 });
    expect(buffer.stats.depth).toBe(2);
    for (let i = 0; i < 12; i++) {
      buffer.push(packet(seq++));
      buffer.pull();
    }
    expect(buffer.stats.depth).toBe(1);
    expect(buffer.stats.discarded).toBe(1);
    // One packet more than the depth still stands at every pull: a whole window (half a
    // second) of it is delay, not jitter, and goes.
    for (let i = 0; i < 40; i++) {
      buffer.push(packet(seq++));
      buffer.pull();
    }
    expect(buffer.stats).toMatchObject({ depth: 1, discarded: 2, buffered: 0 });
  });

  it('drops the burst a network stall left, at once, instead of keeping its delay for the call', () => {
    const buffer = new JitterBuffer({ minDepth: 2 });
    let seq = 0;
    const tick = () => {
      buffer.push(packet(seq++));
      return buffer.pull();
    };
    for (let i = 0; i < 100; i++) tick();
    // A second without packets, then the second's 50 in a burst.
    expect(pulls(buffer, 50).filter((o) => o !== 'empty').length).toBeLessThan(3);
    for (let i = 0; i < 50; i++) buffer.push(packet(seq++));
    const after: JitterOutput[] = [];
    for (let i = 0; i < 100; i++) after.push(tick());
    // Within the first window the standing burst is gone: the buffer holds its depth again.
    expect(buffer.stats.buffered).toBeLessThanOrEqual(buffer.stats.depth);
    expect(buffer.stats.discarded).toBeGreaterThan(40);
    // What plays is in order and ends at the newest packet but the depth.
    const frames = after.filter((o) => o.kind === 'frame').map((o) => (o as { seq: number }).seq);
    expect(frames).toEqual([...frames].sort((a, b) => a - b));
    expect(frames.at(-1)).toBeGreaterThanOrEqual(seq - 1 - buffer.stats.depth);
  });

  it('sheds the packet a faster sender clock adds now and then, one at a time', () => {
    const buffer = new JitterBuffer({ minDepth: 2 });
    let seq = 0;
    // 1 % fast: one packet more than we play every 100 pulls, over 20 s.
    for (let i = 0; i < 1000; i++) {
      buffer.push(packet(seq++));
      if (i % 100 === 99) buffer.push(packet(seq++));
      buffer.pull();
    }
    expect(buffer.stats.buffered).toBeLessThanOrEqual(buffer.stats.depth + 1);
    expect(buffer.stats.discarded).toBeGreaterThanOrEqual(8);
    expect(buffer.stats).toMatchObject({ lost: 0, underruns: 0, late: 0 });
  });

  it('drops nothing from a stream that only jitters about its depth', () => {
    const buffer = new JitterBuffer({ minDepth: 2 });
    let seq = 0;
    // Packets in pairs every other pull: what is held dips to the depth at every other pull.
    for (let i = 0; i < 500; i++) {
      if (i % 2 === 0) {
        buffer.push(packet(seq++));
        buffer.push(packet(seq++));
      }
      buffer.pull();
    }
    expect(buffer.stats).toMatchObject({ discarded: 0, lost: 0 });
  });

  it('plays the talkspurt after a pause of the sender (DTX, silence suppression) at once, at the same depth', () => {
    const buffer = new JitterBuffer({ minDepth: 2 });
    // A talkspurt of 50 packets, 160 timestamp units apart.
    const spurt = (from: number, count: number, ts: number) =>
      Array.from({ length: count }, (_, i) => ({
        sequenceNumber: from + i,
        timestamp: ts + i * 160,
        payload: Uint8Array.of(from + i),
      }));
    let outs: string[] = [];
    for (const p of spurt(0, 50, 0)) {
      buffer.push(p);
      outs.push(describeOutput(buffer.pull()));
    }
    outs = outs.concat(pulls(buffer, 30));
    expect(buffer.stats.underruns).toBe(1);
    // The sender was silent for 600 ms: the next packet follows in sequence, 30 frames later.
    const next = spurt(50, 20, 50 * 160 + 30 * 160);
    buffer.push(next[0]!);
    expect(pulls(buffer, 1)).toEqual(['frame:50']);
    for (const p of next.slice(1)) {
      buffer.push(p);
      buffer.pull();
    }
    expect(buffer.stats).toMatchObject({ depth: 2, lost: 0 });
    expect(outs.filter((o) => o.startsWith('frame'))).toHaveLength(50);
  });

  it('starts afresh when the sequence jumps as from a restarted sender', () => {
    const buffer = new JitterBuffer({ minDepth: 1 });
    buffer.push(packet(100));
    buffer.pull();
    buffer.push(packet(40_000));
    expect(pulls(buffer, 1)).toEqual(['frame:40000']);
  });

  it('refuses options that do not fit together', () => {
    expect(() => new JitterBuffer({ minDepth: 0 })).toThrow(/minDepth/);
    expect(() => new JitterBuffer({ minDepth: 5, maxDepth: 4 })).toThrow(/minDepth <= maxDepth/);
  });

  it('brings a shuffled, duplicated, lossy stream out in order with loss where it was', () => {
    const random = seededRandom(42);
    const first = 65_000; // the run crosses the 16-bit wrap
    const total = 1500;
    const droppedByNetwork = new Set<number>();
    const arrivals: { at: number; seq: number }[] = [];
    for (let i = 0; i < total; i++) {
      const seq = first + i;
      if (random() < 0.08) {
        droppedByNetwork.add(seq);
        continue;
      }
      // 20 ms apart, delayed 0-70 ms, so packets overtake one another.
      const at = i * 20 + random() * 70;
      arrivals.push({ at, seq });
      if (random() < 0.05) arrivals.push({ at: at + random() * 40, seq });
    }
    arrivals.sort((a, b) => a.at - b.at);

    const buffer = new JitterBuffer({ minDepth: 2, maxDepth: 8 });
    const outputs: JitterOutput[] = [];
    const late = new Set<number>();
    let next = 0;
    for (let tick = 0; tick < total + 20; tick++) {
      const now = tick * 20;
      for (; next < arrivals.length && arrivals[next]!.at <= now; next++) {
        const { seq } = arrivals[next]!;
        if (buffer.push(packet(seq)) === 'late') late.add(seq);
      }
      outputs.push(buffer.pull());
    }

    const played = outputs.filter((o) => o.kind !== 'empty');
    // Back to extended numbers: each is the nearest above the one before.
    let previous = first - 1;
    const seqs = played.map((o) => {
      const delta = (o.seq - (previous & 0xffff) + 65536) % 65536;
      previous += delta;
      return previous;
    });
    let gaps = 0;
    played.forEach((o, i) => {
      const seq = seqs[i]!;
      if (i > 0) {
        expect(seq).toBeGreaterThan(seqs[i - 1]!);
        gaps += seq - seqs[i - 1]! - 1;
      }
      if (o.kind === 'frame') {
        expect(droppedByNetwork.has(seq)).toBe(false);
        expect(o.payload[0]).toBe(seq & 0xff);
        expect(o.ts).toBe((seq * 160) >>> 0);
      } else {
        // Loss is signalled only where the network dropped a packet or it came too late.
        expect(droppedByNetwork.has(seq) || late.has(seq)).toBe(true);
      }
    });
    // Every dropped packet inside the played run is signalled, unless skipped in an underrun.
    const lostOutputs = played.filter((o) => o.kind === 'lost').length;
    const stats = buffer.stats;
    expect(gaps).toBe(stats.lost - lostOutputs + stats.discarded);
    const signalled = new Set(seqs.filter((_, i) => played[i]!.kind === 'lost'));
    const droppedInside = [...droppedByNetwork].filter((q) => q > seqs[0]! && q < seqs.at(-1)!);
    expect(droppedInside.filter((q) => !signalled.has(q)).length).toBeLessThanOrEqual(gaps);
    expect(seqs.at(-1)!).toBe(
      first + total - 1 - (droppedByNetwork.has(first + total - 1) ? 1 : 0),
    );
    expect(stats.duplicates).toBeGreaterThan(0);
    expect(stats.late).toBe(late.size);
    expect(droppedByNetwork.size).toBeGreaterThan(50);
  });
});
