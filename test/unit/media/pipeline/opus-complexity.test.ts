import { afterEach, describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { OpusEncoder } from '../../../../src/media/codec/opus.js';
import type { AudioFormat } from '../../../../src/media/pipeline/audio-format.js';
import { MediaSession } from '../../../../src/media/pipeline/media-session.js';
import { FrameClock } from '../../../../src/media/playout/frame-clock.js';
import { PcmSource, type PlayoutSource } from '../../../../src/media/playout/playout-source.js';
import { Resampler } from '../../../../src/media/codec/resampler.js';
import { PortAllocator } from '../../../../src/media/rtp/port-range.js';
import { RtpPeer } from '../../../support/rtp-peer.js';
import { tone } from '../../../support/signal.js';
import { until } from '../../../support/wait.js';

/**
 * The Opus complexity a worker is given (VOXGATE_OPUS_COMPLEXITY, in its environment) is the
 * one its legs encode at: what a phone receives is, byte for byte, what an encoder at that
 * complexity makes of the frames the leg played, and not what one at another complexity makes.
 * Given none, a leg codes narrowband audio (a bot's 8 kHz) CELT only at 0, and wider audio at 5.
 */
const OPUS: AudioFormat = { encoding: 'opus', payloadType: 111, rate: 16000 };
const FRAMES = 50;
const open: MediaSession[] = [];
const peers: RtpPeer[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
});

/** A 440 Hz tone made at 8 kHz, as a stream's bot sends it: its band ends at 4 kHz. */
function narrowbandTone(): PlayoutSource {
  const source = new PcmSource(new Resampler(8000, 16000).process(tone(8000, 440, 2, 8000)));
  return { read: (samples) => source.read(samples), audioBand: 4000 };
}

/**
 * What a leg at `complexity` (the default when undefined) sent, and the frames it played: a
 * 16 kHz tone unless told.
 */
async function sendTone(
  complexity: number | undefined,
  source: PlayoutSource = new PcmSource(tone(16000, 440, 2, 8000)),
) {
  const phone = await RtpPeer.open();
  peers.push(phone);
  const scheduler = new ManualScheduler();
  const base = 40000 + 2 * Math.floor(Math.random() * 5000);
  const session = await MediaSession.open(
    { formats: [OPUS], remote: phone.address },
    {
      allocator: new PortAllocator({ min: base, max: base + 9 }, '127.0.0.1'),
      clock: new FrameClock(scheduler),
      cname: 'opus-complexity-test',
      scheduler,
      ...(complexity !== undefined && { codecs: { opusComplexity: complexity } }),
    },
  );
  open.push(session);
  const played: Int16Array[] = [];
  session.addOutboundTap((pcm) => played.push(Int16Array.from(pcm)));
  void session.play(source);
  for (let i = 0; i < FRAMES; i++) scheduler.advance(20);
  // Only the leg's packets: unit tests share processes, and a port another test's session
  // sent to may be this phone's now.
  const ours = () => phone.received.filter((p) => p.from.port === session.port);
  await until(() => ours().length >= FRAMES);
  const sent = ours()
    .sort((a, b) => a.sequenceNumber - b.sequenceNumber)
    .map((p) => Buffer.from(p.payload).toString('hex'));
  return { sent, played };
}

function encodedAt(
  complexity: number,
  played: Int16Array[],
  band?: number,
  celtOnly = false,
): string[] {
  // A leg's encoder starts planning for no loss: no FEC data until a receiver reports loss.
  const encoder = new OpusEncoder(16000, { complexity, expectedLossPercent: 0, celtOnly });
  if (band !== undefined) encoder.setAudioBand(band, true);
  return played.map((pcm) => encoder.encode(pcm).toString('hex'));
}

describe("a leg's Opus encoder", () => {
  it.each([0, 3, 10])('encodes at complexity %i when the worker says so', async (complexity) => {
    const { sent, played } = await sendTone(complexity);
    expect(played).toHaveLength(FRAMES);
    expect(sent).toHaveLength(FRAMES);
    expect(sent).toEqual(encodedAt(complexity, played));
    // The complexity shows in the packets: the default's differ from these.
    expect(sent).not.toEqual(encodedAt(5, played));
  });

  it('encodes wideband audio at complexity 5 when the worker is given none', async () => {
    const { sent, played } = await sendTone(undefined);
    expect(sent).toHaveLength(FRAMES);
    expect(sent).toEqual(encodedAt(5, played));
    expect(sent).not.toEqual(encodedAt(0, played));
  });

  it('encodes narrowband audio CELT only at complexity 0 when the worker is given none', async () => {
    const { sent, played } = await sendTone(undefined, narrowbandTone());
    expect(sent).toHaveLength(FRAMES);
    expect(sent).toEqual(encodedAt(0, played, 4000, true));
    expect(sent).not.toEqual(encodedAt(1, played, 4000));
    expect(sent).not.toEqual(encodedAt(5, played, 4000, true));
  });

  it("encodes narrowband audio CELT only at the worker's complexity when it is given one", async () => {
    const { sent, played } = await sendTone(5, narrowbandTone());
    expect(sent).toEqual(encodedAt(5, played, 4000, true));
    expect(sent).not.toEqual(encodedAt(0, played, 4000, true));
  });
});
