import { ManualScheduler } from '../../src/core/scheduler.js';
import type { AudioFormat } from '../../src/media/pipeline/audio-format.js';
import { MediaSession } from '../../src/media/pipeline/media-session.js';
import { StreamAudio, type StreamAudioFormat } from '../../src/media/pipeline/stream-audio.js';
import { FrameClock } from '../../src/media/playout/frame-clock.js';
import { PortAllocator } from '../../src/media/rtp/port-range.js';

/**
 * A call leg on the test's own clock with a bidirectional stream's audio on it: what the leg
 * plays out is kept frame by frame, `send` queues the server's audio as playAudio does, and
 * `run` moves the clock on and gives what was played meanwhile. The caller closes `session`.
 */
export async function streamLeg(callFormat: AudioFormat, streamFormat: StreamAudioFormat) {
  const scheduler = new ManualScheduler();
  const base = 40000 + 2 * Math.floor(Math.random() * 5000);
  const session = await MediaSession.open(
    { formats: [callFormat] },
    {
      allocator: new PortAllocator({ min: base, max: base + 9 }, '127.0.0.1'),
      clock: new FrameClock(scheduler),
      cname: 'stream-leg-test',
      scheduler,
    },
  );
  const played: Int16Array[] = [];
  session.addOutboundTap((pcm) => played.push(Int16Array.from(pcm)));
  const audio = new StreamAudio(session, {
    format: streamFormat,
    tracks: [],
    noiseCancellationLevel: null,
    bidirectional: true,
    onFrame: () => {},
    onDigit: () => {},
  });
  const send = (pcm: Int16Array) =>
    audio.enqueue(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), streamFormat);
  /** The frames played over the next `ms`. */
  const run = (ms: number): Int16Array => {
    const from = played.length;
    for (let t = 0; t < ms; t += 20) scheduler.advance(20);
    return Int16Array.from(played.slice(from).flatMap((frame) => [...frame]));
  };
  return { session, audio, send, run, played };
}
