import { afterEach, describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { bridgeSessions } from '../../../../src/media/pipeline/bridge.js';
import { MediaSession } from '../../../../src/media/pipeline/media-session.js';
import { StreamAudio } from '../../../../src/media/pipeline/stream-audio.js';
import { FrameClock } from '../../../../src/media/playout/frame-clock.js';
import { PortAllocator } from '../../../../src/media/rtp/port-range.js';
import { RtpPeer } from '../../../support/rtp-peer.js';

/**
 * A leg bridged by Dial (transcoding: each leg's frames played into the other) with a
 * bidirectional stream, on a clock the test moves: the bot's chunks come bunched (two between
 * one pair of ticks, none between the next), and every frame the leg is sent still carries the
 * far leg's voice.
 */
const PCMU = { encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const };
const L16 = { encoding: 'l16' as const, rate: 8000 as const };
const open: MediaSession[] = [];
const peers: RtpPeer[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
});

/** The far leg as the bridge sees it: a constant voice handed to its tap on every tick. */
function speaker(clock: FrameClock, value: number) {
  const taps = new Set<(frame: Int16Array) => void>();
  clock.add(() => {
    const frame = new Int16Array(160).fill(value);
    for (const tap of taps) tap(frame);
  });
  return {
    rate: 8000,
    addTap: (tap: (frame: Int16Array) => void) => (taps.add(tap), () => taps.delete(tap)),
    play: () => new Promise<boolean>(() => {}),
    paceByTicks: () => () => {},
  } as unknown as MediaSession;
}

describe("a bridged leg's stream", () => {
  it('plays the bot beside the far leg without a frame of it missing, however its chunks come', async () => {
    const scheduler = new ManualScheduler();
    const clock = new FrameClock(scheduler);
    const phone = await RtpPeer.open();
    peers.push(phone);
    const base = 40000 + 2 * Math.floor(Math.random() * 5000);
    const member = await MediaSession.open(
      { formats: [PCMU], remote: phone.address },
      {
        allocator: new PortAllocator({ min: base, max: base + 9 }, '127.0.0.1'),
        clock,
        cname: 'member-test',
        scheduler,
      },
    );
    open.push(member);
    const other = speaker(clock, 1000);
    const part = bridgeSessions(member, other);
    const stream = new StreamAudio(member, {
      format: L16,
      tracks: [],
      noiseCancellationLevel: null,
      bidirectional: true,
      onFrame: () => {},
      onDigit: () => {},
    });
    // What the leg is sent: the far leg (1000) alone, or it and the bot (1000 + 50).
    const sent: number[] = [];
    member.addOutboundTap((pcm) => sent.push(pcm[80]!));
    scheduler.advance(200);
    const chunk = Buffer.from(new Int16Array(160).fill(50).buffer);
    for (let pair = 0; pair < 25; pair++) {
      scheduler.advance(3);
      stream.enqueue(chunk, L16);
      scheduler.advance(12);
      stream.enqueue(chunk, L16);
      scheduler.advance(25);
    }
    scheduler.advance(200);
    // The far leg is in every frame from its first on; the bot's 50 chunks all went.
    const first = sent.indexOf(1000);
    const frames = sent.slice(first);
    expect(frames.filter((v) => v !== 1000 && v !== 1050)).toEqual([]);
    expect(frames.filter((v) => v === 1050)).toHaveLength(50);
    // One frame per 20 ms: 1400 ms of clock.
    expect(sent).toHaveLength(70);
    part();
    stream.close();
  });
});
