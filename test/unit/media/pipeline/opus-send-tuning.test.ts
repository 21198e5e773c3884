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
 * follows the audio played (a stream's 8 kHz audio goes narrowband on a 16 kHz call, CELT
 * only), and in-band FEC is made only while the phone's RTCP reports loss (narrowband audio
 * then goes SILK, which alone carries it).
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

/**
 * RFC 6716 3.1: the TOC byte's configuration; 0-3 SILK narrowband, 8-11 SILK wideband, 16-19
 * CELT narrowband.
 */
const configOf = (packet: ReceivedRtp): number => packet.payload[0]! >> 3;
const silkNarrowband = (config: number): boolean => config >= 0 && config <= 3;
const celtNarrowband = (config: number): boolean => config >= 16 && config <= 19;

/** A bidirectional stream on the leg whose server sends 8 kHz mu-law. */
function botStream(session: MediaSession): StreamAudio {
  return new StreamAudio(session, {
    format: MULAW,
    tracks: [],
    noiseCancellationLevel: null,
    bidirectional: true,
    onFrame: () => {},
    onDigit: () => {},
  });
}

/** Whether a packet carries FEC (LBRR) data: a fresh decoder recovers audio from it. */
function carriesFec(packet: ReceivedRtp): boolean {
  const recovered = new OpusDecoder(16000).decodeFec(packet.payload, 320);
  return recovered.some((sample) => Math.abs(sample) > 100);
}

describe("a leg's Opus encoder", () => {
  it("codes a stream's 8 kHz audio narrowband, and audio of unknown band wideband", async () => {
    const { session, run } = await opusLeg();
    const stream = botStream(session);
    // The server's audio starts after silence: the encoder moves to its band at once.
    stream.enqueue(muLawEncode(tone(8000, 1000, 1, 8000)), MULAW);
    const streamed = await run(50);
    expect(streamed.map(configOf).every(celtNarrowband)).toBe(true);
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

    const reports = lossReports(session.rtcpPort, phone.ssrc, clean[0]!);
    try {
      // 20 % lost: from the next frames on, each packet carries a copy of the one before.
      await reports.send(51);
      const lossy = await run(100);
      expect(lossy.slice(2).filter(carriesFec).length).toBeGreaterThan(50);

      // Loss that clears is let go of over several reports, then no more FEC is made.
      await reports.send(0, 15);
      const cleared = await run(100);
      expect(cleared.slice(2).filter(carriesFec)).toEqual([]);
    } finally {
      reports.close();
    }
  });

  it("codes a stream's 8 kHz audio SILK with FEC while loss is reported, CELT only again after", async () => {
    const { phone, session, run } = await opusLeg();
    const stream = botStream(session);
    const speech = await new SpeechRenderer().renderAt(SCRIPT, 'WOMAN', 'en-US', 8000);
    const say = () => stream.enqueue(muLawEncode(speech.samples.subarray(0, 8000 * 2)), MULAW);
    say();
    const clean = await run(100);
    expect(clean.slice(1, 90).map(configOf).every(celtNarrowband)).toBe(true);

    const reports = lossReports(session.rtcpPort, phone.ssrc, clean[0]!);
    try {
      await reports.send(51);
      say();
      const lossy = await run(100);
      const coded = lossy.slice(2, 90);
      expect(coded.map(configOf).every(silkNarrowband)).toBe(true);
      expect(coded.filter(carriesFec).length).toBeGreaterThan(30);
      // The peer hears the speech across the change of mode.
      const decoder = new OpusDecoder(16000);
      const heard = Int16Array.from(
        lossy.slice(2, 90).flatMap((p) => [...decoder.decode(p.payload)]),
      );
      expect(Math.max(...heard.map(Math.abs))).toBeGreaterThan(1000);

      await reports.send(0, 15);
      say();
      const cleared = await run(100);
      expect(cleared.slice(2, 90).map(configOf).every(celtNarrowband)).toBe(true);
    } finally {
      reports.close();
    }
    stream.close();
  });
});

/**
 * Receiver reports from the phone about the leg's packets (`first` one of them): `send` sends
 * `times` reports of `fractionLost` (0-255), then leaves the leg a moment to take them.
 */
function lossReports(port: number, ssrc: number, first: ReceivedRtp) {
  const rtcp = createSocket('udp4');
  const sendOne = async (fractionLost: number): Promise<void> => {
    const packet = serializeRtcpCompound([
      {
        type: 'rr',
        ssrc,
        reports: [
          {
            ssrc: first.ssrc,
            fractionLost,
            cumulativeLost: 0,
            extendedHighestSequence: first.sequenceNumber,
            jitter: 0,
            lastSenderReport: 0,
            delaySinceLastSenderReport: 0,
          },
        ],
      },
    ]);
    await new Promise<void>((resolve) => rtcp.send(packet, port, '127.0.0.1', () => resolve()));
  };
  return {
    async send(fractionLost: number, times = 1): Promise<void> {
      for (let i = 0; i < times; i++) await sendOne(fractionLost);
      await new Promise((resolve) => setTimeout(resolve, 50));
    },
    close: () => rtcp.close(),
  };
}
