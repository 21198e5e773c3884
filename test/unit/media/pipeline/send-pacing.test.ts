import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { muLawEncode } from '../../../../src/media/codec/g711.js';
import { MediaSession } from '../../../../src/media/pipeline/media-session.js';
import { QueueFullError, StreamAudio } from '../../../../src/media/pipeline/stream-audio.js';
import { FrameClock } from '../../../../src/media/playout/frame-clock.js';
import { PcmSource, PushedSource } from '../../../../src/media/playout/playout-source.js';
import { PortAllocator } from '../../../../src/media/rtp/port-range.js';
import { RtpPeer } from '../../../support/rtp-peer.js';
import { chunks, tone } from '../../../support/signal.js';
import { until } from '../../../support/wait.js';

/**
 * How many frames a leg sends, on a clock the test moves: whatever drives the leg (its ticks,
 * or audio arriving), it sends one frame per 20 ms of time, no fewer and no more.
 */
const PCMU = { encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const };
const open: MediaSession[] = [];
const peers: RtpPeer[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((s) => s.close()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
});

async function leg(scheduler: ManualScheduler): Promise<MediaSession> {
  const phone = await RtpPeer.open();
  peers.push(phone);
  const base = 40000 + 2 * Math.floor(Math.random() * 5000);
  const session = await MediaSession.open(
    { formats: [PCMU], remote: phone.address },
    {
      allocator: new PortAllocator({ min: base, max: base + 9 }, '127.0.0.1'),
      clock: new FrameClock(scheduler),
      cname: 'pacing-test',
      scheduler,
    },
  );
  open.push(session);
  return session;
}

describe('a leg paces its frames', () => {
  it('sends a frame on every tick while the ticks drive it', async () => {
    const scheduler = new ManualScheduler();
    const session = await leg(scheduler);
    void session.play(new PcmSource(tone(8000, 600, 2, 8000)));
    // The clock moved in uneven steps: a second holds 50 ticks all the same.
    for (const step of [29, 11, 26, 14, 20, 20, 27, 13]) scheduler.advance(step);
    for (let i = 0; i < 42; i++) scheduler.advance(20);
    expect(session.stats.packetsSent).toBe(50);
  });

  it('sends audio as it arrives and lets the ticks wait, one frame per 20 ms all the same', async () => {
    const scheduler = new ManualScheduler();
    const session = await leg(scheduler);
    const pushed = new PushedSource();
    void session.play(pushed);
    scheduler.advance(100); // five ticks of silence
    expect(session.stats.packetsSent).toBe(5);
    // Audio arrives every 20 ms, 7 ms after each tick: it goes at once, the ticks send nothing.
    scheduler.advance(7);
    for (let i = 0; i < 50; i++) {
      pushed.push(tone(8000, 600, 0.02, 8000));
      session.sendNow(1);
      scheduler.advance(20);
    }
    expect(session.stats.packetsSent).toBe(55);
    // The audio stops: the ticks wait out the grace period, then send silence again.
    scheduler.advance(200);
    expect(session.stats.packetsSent).toBeGreaterThanOrEqual(61);
    expect(session.stats.packetsSent).toBeLessThanOrEqual(63);
  });
});

describe("a stream's audio on a leg", () => {
  const MULAW = { encoding: 'mulaw' as const, rate: 8000 as const };

  async function streamLeg(scheduler: ManualScheduler) {
    const session = await leg(scheduler);
    const audio = new StreamAudio(session, {
      format: MULAW,
      tracks: [],
      noiseCancellationLevel: null,
      bidirectional: true,
      onFrame: () => {},
      onDigit: () => {},
    });
    // The times frames with sound went out, read as the leg plays them.
    const sounded: number[] = [];
    session.addOutboundTap((pcm) => {
      if (pcm.some((v) => v !== 0)) sounded.push(scheduler.now());
    });
    return { session, audio, sounded };
  }

  it('plays 200 chunks of 20 ms that came at once one frame each 20 ms, then the checkpoint', async () => {
    const scheduler = new ManualScheduler();
    const { audio, sounded } = await streamLeg(scheduler);
    scheduler.advance(107);
    for (const part of chunks(tone(8000, 600, 4, 8000), [160])) {
      audio.enqueue(muLawEncode(part), MULAW);
    }
    let playedAt: number | null = null;
    audio.checkpoint(() => (playedAt = scheduler.now()));
    for (let ms = 0; ms < 4300; ms++) scheduler.advance(1);
    expect(sounded).toHaveLength(200);
    // The first frame went as the audio came, each next one no sooner than its time.
    expect(sounded[0]).toBe(107);
    for (let i = 1; i < sounded.length; i++) {
      expect(sounded[i]! - sounded[0]!).toBeGreaterThanOrEqual(i * 20 - 2);
      expect(sounded[i]! - sounded[i - 1]!).toBeLessThanOrEqual(40);
    }
    expect(playedAt).toBe(sounded[199]);
  });

  it('sends audio streamed at real time as it arrives, though its first chunk came late', async () => {
    const scheduler = new ManualScheduler();
    const { audio, sounded } = await streamLeg(scheduler);
    const parts = [...chunks(tone(8000, 600, 1, 8000), [160])].map(muLawEncode);
    // Due every 20 ms from 100 ms: the first 6 ms late, the others within 2 ms either side.
    const arrivals = parts.map((_, k) => 100 + 20 * k + (k === 0 ? 6 : [0, 2, -2, 1][k % 4]!));
    for (let k = 0; k < parts.length; k++) {
      scheduler.advance(arrivals[k]! - scheduler.now());
      audio.enqueue(parts[k]!, MULAW);
    }
    scheduler.advance(100);
    expect(sounded).toEqual(arrivals);
  });

  /** Plays one 20 ms chunk of tone at each of `arrivals` (ms); the times each frame went. */
  async function streamAt(arrivals: number[]): Promise<number[]> {
    const scheduler = new ManualScheduler();
    const { audio, sounded } = await streamLeg(scheduler);
    const parts = [...chunks(tone(8000, 600, arrivals.length / 50, 8000), [160])].map(muLawEncode);
    for (let k = 0; k < arrivals.length; k++) {
      scheduler.advance(arrivals[k]! - scheduler.now());
      audio.enqueue(parts[k]!, MULAW);
    }
    for (let ms = 0; ms < 500; ms++) scheduler.advance(1);
    expect(sounded).toHaveLength(arrivals.length);
    return sounded;
  }

  /** Frames k from `from` on went within 2 ms of their arrival; none before it went early. */
  function caughtUp(sounded: number[], arrivals: number[], from: number): void {
    for (let k = 0; k < arrivals.length; k++) {
      expect(sounded[k]!).toBeGreaterThanOrEqual(arrivals[k]!);
      if (k >= from) expect(sounded[k]! - arrivals[k]!).toBeLessThanOrEqual(2);
    }
  }

  it('sends a real-time stream whose first frames came in a burst as it arrives, once caught up', async () => {
    // Four frames at once at 100 ms, then one every 20 ms for 2 s (jitter within 2 ms).
    const arrivals = Array.from({ length: 104 }, (_, k) =>
      k < 4 ? 100 : 100 + 20 * (k - 3) + [0, 2, -2, 1][k % 4]!,
    );
    const sounded = await streamAt(arrivals);
    caughtUp(sounded, arrivals, 20);
    // Caught up by at most 100 ms: never more than 5 frames ahead of the first's time.
    for (let k = 1; k < sounded.length; k++) {
      expect(sounded[k]! - sounded[0]!).toBeGreaterThanOrEqual(k * 20 - 100 - 2);
    }
  });

  it('sends a real-time stream whose first frame came 15 ms late as it arrives, once caught up', async () => {
    const arrivals = Array.from({ length: 100 }, (_, k) => (k === 0 ? 115 : 100 + 20 * k));
    caughtUp(await streamAt(arrivals), arrivals, 15);
  });

  it('catches a talkspurt up after its audio stopped for 100 ms and came again in a burst', async () => {
    // Real time from 100 ms; frames 50-54 come together 100 ms late, then real time again.
    const arrivals = Array.from({ length: 150 }, (_, k) =>
      k >= 50 && k < 55 ? 100 + 20 * 54 + 1 : 100 + 20 * k + 1,
    );
    const sounded = await streamAt(arrivals);
    caughtUp(sounded, arrivals, 60);
    // No faster than real time beyond the 100 ms caught up.
    for (let k = 1; k < sounded.length; k++) {
      expect(sounded[k]! - sounded[0]!).toBeGreaterThanOrEqual(k * 20 - 100 - 2);
    }
  });

  it('keeps time from the tick it owed when the worker stood still as a talkspurt began', async () => {
    const scheduler = new ManualScheduler();
    const { audio, sounded } = await streamLeg(scheduler);
    const parts = [...chunks(tone(8000, 600, 2, 8000), [160])].map(muLawEncode);
    scheduler.advance(107);
    // The worker stands still for 200 ms while a server streaming at real time sends ten
    // chunks (due from 120 ms on); it reads them all at 307 ms, before the ticks it owes.
    scheduler.stall(200);
    for (const part of parts.slice(0, 10)) audio.enqueue(part, MULAW);
    scheduler.advance(0);
    // The stream goes on at real time.
    const arrivals = parts.map((_, k) => 120 + 20 * k + [0, 2, -2, 1][k % 4]!);
    for (let k = 10; k < parts.length; k++) {
      scheduler.advance(arrivals[k]! - scheduler.now());
      audio.enqueue(parts[k]!, MULAW);
    }
    scheduler.advance(500);
    expect(sounded).toHaveLength(parts.length);
    // The ten the peer had no frame for go as the worker gets to them, the rest as they come:
    // the stall does not stay in the audio as a delay.
    expect(sounded.slice(0, 10)).toEqual(Array(10).fill(307));
    for (let k = 10; k < parts.length; k++) {
      expect(sounded[k]! - arrivals[k]!).toBeGreaterThanOrEqual(0);
      expect(sounded[k]! - arrivals[k]!).toBeLessThanOrEqual(2);
    }
  });

  it("keeps the inbound track at one frame per 20 ms while the caller is silent and the server's audio pauses", async () => {
    const scheduler = new ManualScheduler();
    // The inbound track keeps time by the worker's clock: the test's, here.
    vi.spyOn(performance, 'now').mockImplementation(() => scheduler.now());
    const session = await leg(scheduler);
    const inboundAt: number[] = [];
    const audio = new StreamAudio(session, {
      format: MULAW,
      tracks: ['inbound'],
      noiseCancellationLevel: null,
      bidirectional: true,
      onFrame: () => inboundAt.push(scheduler.now()),
      onDigit: () => {},
    });
    // The server's audio comes every 100 ms, so the leg's talkspurt keeps waiting for it.
    const frame = muLawEncode(tone(8000, 600, 0.02, 8000));
    for (let ms = 1; ms <= 1000; ms++) {
      scheduler.advance(1);
      if (ms % 100 === 5) audio.enqueue(frame, MULAW);
    }
    // The caller sends nothing: silence fills in from 80 ms on, one frame per tick.
    expect(inboundAt).toEqual(Array.from({ length: 47 }, (_, k) => 80 + 20 * k));
  });

  it('joins chunks of 7 and 30 ms into whole frames, the first part held for the rest', async () => {
    const scheduler = new ManualScheduler();
    const { session, audio, sounded } = await streamLeg(scheduler);
    const phone = peers.at(-1)!;
    const pcm = tone(8000, 600, 4, 8000);
    const parts = [...chunks(pcm, [56, 240])].map(muLawEncode);
    // A 7 ms chunk comes just before a tick, the rest just after it.
    scheduler.advance(119);
    audio.enqueue(parts[0]!, MULAW);
    scheduler.advance(1);
    expect(sounded).toEqual([]);
    scheduler.advance(1);
    for (const part of parts.slice(1)) audio.enqueue(part, MULAW);
    for (let ms = 0; ms < 4300; ms++) scheduler.advance(1);
    expect(sounded).toHaveLength(200);
    expect(sounded[0]).toBe(121);
    await until(() => phone.received.length === session.stats.packetsSent);
    const heard = phone.received.filter((p) => p.payload.some((b) => b !== 0xff));
    expect(heard).toHaveLength(200);
    expect(Buffer.concat(heard.map((p) => p.payload))).toEqual(muLawEncode(pcm));
  });

  it('queues at most 40 s of audio in 20 ms chunks, and clearAudio empties it at once', async () => {
    const scheduler = new ManualScheduler();
    const { audio, sounded } = await streamLeg(scheduler);
    scheduler.advance(10);
    const frame = muLawEncode(tone(8000, 600, 0.02, 8000));
    // The first frame goes at once; 40 s more wait in the queue, and the next chunk is refused.
    for (let i = 0; i < 2001; i++) audio.enqueue(frame, MULAW);
    expect(() => audio.enqueue(frame, MULAW)).toThrow(QueueFullError);
    expect(() => audio.enqueue(frame, MULAW)).toThrow(/at most 40 s of audio/);
    scheduler.advance(50);
    expect(sounded).toEqual([10, 40, 60]);
    // The two frames played since make room for two more.
    audio.enqueue(frame, MULAW);
    audio.enqueue(frame, MULAW);
    expect(() => audio.enqueue(frame, MULAW)).toThrow(QueueFullError);
    let played = false;
    audio.checkpoint(() => (played = true));
    audio.clear();
    for (let ms = 0; ms < 200; ms++) scheduler.advance(1);
    expect(sounded).toHaveLength(3);
    expect(played).toBe(false);
  });
});
