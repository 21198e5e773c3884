import { createSocket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { muLawEncode } from '../../../../src/media/codec/g711.js';
import { OpusDecoder } from '../../../../src/media/codec/opus.js';
import type { AudioFormat } from '../../../../src/media/pipeline/audio-format.js';
import { MediaSession } from '../../../../src/media/pipeline/media-session.js';
import { StreamAudio } from '../../../../src/media/pipeline/stream-audio.js';
import { FrameClock } from '../../../../src/media/playout/frame-clock.js';
import { PcmSource } from '../../../../src/media/playout/playout-source.js';
import { SpeechRenderer } from '../../../../src/media/sources/speech.js';
import { PortAllocator } from '../../../../src/media/rtp/port-range.js';
import { serializeRtcpCompound } from '../../../../src/media/rtp/rtcp-packet.js';
import { RtpPeer, type ReceivedRtp } from '../../../support/rtp-peer.js';
import { powerAt, strongestFrequency, tone } from '../../../support/signal.js';
import { until } from '../../../support/wait.js';

/**
 * How a leg's Opus encoder adapts, read from the packets a phone receives: the band it codes
 * follows the audio played (a stream's 8 kHz audio goes narrowband on a 16 kHz call), and
 * in-band FEC is made only while the phone's RTCP reports loss.
 */
const OPUS: AudioFormat = { encoding: 'opus', payloadType: 111, rate: 16000 };
const MULAW = { encoding: 'mulaw', rate: 8000 } as const;
const SCRIPT = 'Thank you for calling. Please say the name of the person you want to reach.';
const open: MediaSession[] = [];
const peers: RtpPeer[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
});

async function opusLeg() {
  const phone = await RtpPeer.open();
  peers.push(phone);
  const scheduler = new ManualScheduler();
  const base = 40000 + 2 * Math.floor(Math.random() * 5000);
  const session = await MediaSession.open(
    { formats: [OPUS], remote: phone.address },
    {
      allocator: new PortAllocator({ min: base, max: base + 9 }, '127.0.0.1'),
      clock: new FrameClock(scheduler),
      cname: 'opus-tuning-test',
      scheduler,
    },
  );
  open.push(session);
  /** Runs the leg's clock `frames` ticks and gives the packets sent meanwhile, in order. */
  const run = async (frames: number): Promise<ReceivedRtp[]> => {
    const before = phone.received.length;
    for (let i = 0; i < frames; i++) scheduler.advance(20);
    // A talkspurt's end may leave a tick or two unsent (the pacer waits for audio under way).
    await until(() => phone.received.length >= before + frames - 2);
    await new Promise((resolve) => setTimeout(resolve, 30));
    return [...phone.received.slice(before)].sort((a, b) => a.sequenceNumber - b.sequenceNumber);
  };
  return { phone, session, scheduler, run };
}

/** RFC 6716 3.1: the TOC byte's configuration; 0-3 SILK narrowband, 8-11 SILK wideband. */
const configOf = (packet: ReceivedRtp): number => packet.payload[0]! >> 3;

/** Whether a packet carries FEC (LBRR) data: a fresh decoder recovers audio from it. */
function carriesFec(packet: ReceivedRtp): boolean {
  const recovered = new OpusDecoder(16000).decodeFec(packet.payload, 320);
  return recovered.some((sample) => Math.abs(sample) > 100);
}

describe("a leg's Opus encoder", () => {
  it("codes a stream's 8 kHz audio narrowband, and audio of unknown band wideband", async () => {
    const { session, run } = await opusLeg();
    const stream = new StreamAudio(session, {
      format: MULAW,
      tracks: [],
      noiseCancellationLevel: null,
      bidirectional: true,
      onFrame: () => {},
      onDigit: () => {},
    });
    // The server's audio starts after silence: the encoder moves to its band at once.
    stream.enqueue(muLawEncode(tone(8000, 1000, 1, 8000)), MULAW);
    const streamed = await run(50);
    expect(streamed.map(configOf).every((c) => c >= 0 && c <= 3)).toBe(true);
    // Narrowband on the wire, and still the server's tone once decoded at the call's rate.
    const decoder = new OpusDecoder(16000);
    const heard = Int16Array.from(
      streamed.slice(5, 45).flatMap((p) => [...decoder.decode(p.payload)]),
    );
    expect(Math.abs(strongestFrequency(heard, 16000) - 1000)).toBeLessThanOrEqual(50);

    // Then speech or a file at the call's rate: its whole band is coded.
    await run(10);
    void session.play(new PcmSource(tone(16000, 5000, 1, 8000)));
    const played = await run(40);
    expect(
      played
        .slice(1)
        .map(configOf)
        .every((c) => c >= 8 && c <= 11),
    ).toBe(true);
    const wide = new OpusDecoder(16000);
    const wideAudio = Int16Array.from(played.slice(5).flatMap((p) => [...wide.decode(p.payload)]));
    expect(powerAt(wideAudio, 16000, 5000)).toBeGreaterThan(powerAt(wideAudio, 16000, 1000) * 10);
    stream.close();
  });

  it('makes FEC only while the receiver reports loss', async () => {
    const { phone, session, run } = await opusLeg();
    // Speech: libopus makes FEC data only for frames its voice detector finds active.
    const speech = await new SpeechRenderer().renderAt(SCRIPT, 'WOMAN', 'en-US', 16000);
    void session.play(new PcmSource(speech.samples, true));
    const clean = await run(100);
    expect(clean.slice(2).filter(carriesFec)).toEqual([]);

    const rtcp = createSocket('udp4');
    const report = async (fractionLost: number) => {
      const packet = serializeRtcpCompound([
        {
          type: 'rr',
          ssrc: phone.ssrc,
          reports: [
            {
              ssrc: clean[0]!.ssrc,
              fractionLost,
              cumulativeLost: 0,
              extendedHighestSequence: clean.at(-1)!.sequenceNumber,
              jitter: 0,
              lastSenderReport: 0,
              delaySinceLastSenderReport: 0,
            },
          ],
        },
      ]);
      await new Promise<void>((resolve) =>
        rtcp.send(packet, session.rtcpPort, '127.0.0.1', () => resolve()),
      );
    };
    try {
      // 20 % lost: from the next frames on, each packet carries a copy of the one before.
      await report(51);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const lossy = await run(100);
      expect(lossy.slice(2).filter(carriesFec).length).toBeGreaterThan(50);

      // Loss that clears is let go of over several reports, then no more FEC is made.
      for (let i = 0; i < 15; i++) await report(0);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const cleared = await run(100);
      expect(cleared.slice(2).filter(carriesFec)).toEqual([]);
    } finally {
      rtcp.close();
    }
  });
});
