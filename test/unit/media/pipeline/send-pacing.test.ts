import { afterEach, describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { MediaSession } from '../../../../src/media/pipeline/media-session.js';
import { FrameClock } from '../../../../src/media/playout/frame-clock.js';
import { PcmSource, PushedSource } from '../../../../src/media/playout/playout-source.js';
import { PortAllocator } from '../../../../src/media/rtp/port-range.js';
import { RtpPeer } from '../../../support/rtp-peer.js';
import { tone } from '../../../support/signal.js';

/**
 * How many frames a leg sends, on a clock the test moves: whatever drives the leg (its ticks,
 * or audio arriving), it sends one frame per 20 ms of time, no fewer and no more.
 */
const PCMU = { encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const };
const open: MediaSession[] = [];
const peers: RtpPeer[] = [];

afterEach(async () => {
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
      session.sendNow(true);
      scheduler.advance(20);
    }
    expect(session.stats.packetsSent).toBe(55);
    // The audio stops: the ticks wait out the grace period, then send silence again.
    scheduler.advance(200);
    expect(session.stats.packetsSent).toBeGreaterThanOrEqual(61);
    expect(session.stats.packetsSent).toBeLessThanOrEqual(63);
  });
});
