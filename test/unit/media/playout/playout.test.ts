import { describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { FrameClock } from '../../../../src/media/playout/frame-clock.js';
import { PlayoutQueue } from '../../../../src/media/playout/playout-queue.js';
import { PcmSource, PushedSource } from '../../../../src/media/playout/playout-source.js';

const constant = (value: number, length: number) => new Int16Array(length).fill(value);

describe('PlayoutQueue', () => {
  it('plays silence with nothing queued, then a source frame by frame, padded at its end', () => {
    const queue = new PlayoutQueue(160);
    expect(queue.frame()).toEqual(constant(0, 160));
    let done = 0;
    queue.play(new PcmSource(constant(100, 200)), { onDone: () => done++ });
    expect(queue.frame()).toEqual(constant(100, 160));
    const last = queue.frame();
    expect([...last.subarray(0, 40)].every((v) => v === 100)).toBe(true);
    expect([...last.subarray(40)].every((v) => v === 0)).toBe(true);
    expect(queue.frame()).toEqual(constant(0, 160));
    expect(done).toBe(1);
    expect(queue.active).toBe(0);
  });

  it('mixes sources with saturation, and replace stops what was playing', () => {
    const queue = new PlayoutQueue(4);
    let stopped = 0;
    queue.play(new PcmSource(constant(30000, 8)), { onDone: () => stopped++ });
    queue.play(new PcmSource(constant(10000, 8)));
    expect([...queue.frame()]).toEqual([32767, 32767, 32767, 32767]);
    queue.play(new PcmSource(constant(-5, 8)), { mode: 'replace' });
    expect(stopped).toBe(1);
    expect([...queue.frame()]).toEqual([-5, -5, -5, -5]);
  });

  it('loops a source until stopped', () => {
    const queue = new PlayoutQueue(4);
    queue.play(new PcmSource(Int16Array.from([1, 2, 3]), true));
    expect([...queue.frame(), ...queue.frame(), ...queue.frame()]).toEqual([
      1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3,
    ]);
    queue.stop();
    expect([...queue.frame()]).toEqual([0, 0, 0, 0]);
  });

  it('plays pushed audio at the frame clock however fast it arrived, and clears at once', () => {
    const queue = new PlayoutQueue(4);
    const pushed = new PushedSource();
    queue.play(pushed);
    expect([...queue.frame()]).toEqual([0, 0, 0, 0]); // waiting, not ended
    pushed.push(Int16Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
    expect([...queue.frame()]).toEqual([1, 2, 3, 4]);
    pushed.clear();
    expect([...queue.frame()]).toEqual([0, 0, 0, 0]);
    pushed.push(Int16Array.from([7]));
    pushed.end();
    expect([...queue.frame()]).toEqual([7, 0, 0, 0]);
    expect(queue.active).toBe(0);
  });
});

describe('PushedSource', () => {
  it('gives frames across chunks of any size, in order, and counts what is left', () => {
    const pushed = new PushedSource();
    pushed.push(Int16Array.from([1, 2, 3]));
    pushed.push(Int16Array.from([4, 5, 6, 7, 8]));
    pushed.push(Int16Array.from([9, 10]));
    expect([...pushed.read(4)!]).toEqual([1, 2, 3, 4]);
    expect(pushed.queued).toBe(6);
    expect([...pushed.read(2)!]).toEqual([5, 6]);
    expect([...pushed.read(4)!]).toEqual([7, 8, 9, 10]);
    expect(pushed.queued).toBe(0);
    expect([...pushed.read(4)!]).toEqual([]);
    pushed.push(Int16Array.from([11, 12]));
    pushed.end();
    expect([...pushed.read(4)!]).toEqual([11, 12]);
    expect(pushed.read(4)).toBeNull();
  });

  it('holds part of a frame that would start the audio for one read, not part of one ending it', () => {
    const queue = new PlayoutQueue(4);
    const pushed = new PushedSource();
    queue.play(pushed);
    pushed.push(Int16Array.from([1]));
    expect(pushed.ready(4)).toBe(false);
    expect([...queue.frame()]).toEqual([0, 0, 0, 0]); // held for the rest
    expect(pushed.ready(4)).toBe(true); // it has waited a frame: it goes next
    pushed.push(Int16Array.from([2, 3]));
    pushed.push(Int16Array.from([4, 5, 6]));
    expect([...queue.frame()]).toEqual([1, 2, 3, 4]); // joined across chunks
    expect(pushed.ready(4)).toBe(false);
    expect([...queue.frame()]).toEqual([5, 6, 0, 0]); // the end of audio under way goes at once
    pushed.push(Int16Array.from([7]));
    expect([...queue.frame()]).toEqual([0, 0, 0, 0]); // a new start is held again
    expect([...queue.frame()]).toEqual([7, 0, 0, 0]); // and given once it has waited
    expect(queue.frame()).toBe(queue.silence);
  });

  it('reads whole samples only when asked for a fraction of one', () => {
    const pushed = new PushedSource();
    pushed.push(Int16Array.from([1]));
    pushed.push(Int16Array.from([2, 3]));
    expect([...pushed.read(2.5)!]).toEqual([1, 2]);
    expect([...pushed.read(4)!]).toEqual([3]);
  });
});

describe('FrameClock', () => {
  it('ticks every leg from one timer, every 20 ms', () => {
    const scheduler = new ManualScheduler();
    const clock = new FrameClock(scheduler);
    const counts = [0, 0, 0];
    const removers = counts.map((_, i) => clock.add(() => counts[i]!++));
    expect(scheduler.timersPending).toBe(1);
    scheduler.advance(100);
    expect(counts).toEqual([5, 5, 5]);
    removers[0]!();
    scheduler.advance(40);
    expect(counts).toEqual([5, 7, 7]);
    removers[1]!();
    removers[2]!();
    expect(scheduler.timersPending).toBe(0);
  });

  it('keeps ticking the other legs when one throws', () => {
    const scheduler = new ManualScheduler();
    const errors: string[] = [];
    const clock = new FrameClock(scheduler, 20, (e) => errors.push(e.message));
    let good = 0;
    clock.add(() => {
      throw new Error('bad leg');
    });
    clock.add(() => good++);
    scheduler.advance(60);
    expect(good).toBe(3);
    expect(errors).toEqual(['bad leg', 'bad leg', 'bad leg']);
  });
});
