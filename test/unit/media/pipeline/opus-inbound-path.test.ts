import { describe, expect, it } from 'vitest';
import { OpusEncoder } from '../../../../src/media/codec/opus.js';
import { energyDbfs } from '../../../../src/media/codec/pcm-frame.js';
import type { AudioFormat } from '../../../../src/media/pipeline/audio-format.js';
import { InboundPath, type InboundPacket } from '../../../../src/media/pipeline/inbound-path.js';
import { chunks, concat, powerAt, strongestFrequency, tone } from '../../../support/signal.js';

const OPUS: AudioFormat = { encoding: 'opus', payloadType: 111, rate: 16000 };

/** 20 ms Opus packets of `pcm` (16 kHz), their timestamps on the 48 kHz clock (RFC 7587 4.1). */
function opusPackets(pcm: Int16Array): InboundPacket[] {
  const encoder = new OpusEncoder(16000);
  return [...chunks(pcm, [320])].map((frame, i) => ({
    payloadType: 111,
    sequenceNumber: (65500 + i) & 0xffff,
    timestamp: (4_294_000_000 + i * 960) >>> 0,
    payload: encoder.encode(frame),
  }));
}

/**
 * Pushes a packet and pulls a frame every 20 ms, the packets `lead` ahead of the pulls (a
 * jitter buffer that has filled); `skip` never arrive.
 */
function run(
  path: InboundPath,
  input: InboundPacket[],
  skip = new Set<number>(),
  lead = 0,
): Int16Array[] {
  const out: Int16Array[] = [];
  for (let i = -lead; i < input.length + 10; i++) {
    const pushed = i + lead;
    if (pushed < input.length && !skip.has(pushed)) path.push(input[pushed]!);
    if (i < 0) continue;
    const frame = path.frame();
    if (frame) out.push(frame);
  }
  return out;
}

describe('InboundPath with Opus', () => {
  it('decodes Opus to 20 ms frames at 16 kHz, a tone kept, across the sequence wrap', () => {
    const path = new InboundPath({ rate: 16000, formats: [OPUS] });
    const frames = run(path, opusPackets(tone(16000, 1000, 1, 8000)));
    expect(frames).toHaveLength(50);
    for (const frame of frames) expect(frame.length).toBe(320);
    expect(strongestFrequency(concat(frames).subarray(1600), 16000)).toBe(1000);
    expect(path.stats).toMatchObject({ lost: 0, concealed: 0, undecodable: 0, fecDecoded: 0 });
  });

  it('plays silence for the numbers of RFC 4733 events, and decodes on after them', () => {
    const path = new InboundPath({ rate: 16000, formats: [OPUS] });
    const input = opusPackets(tone(16000, 1000, 1, 8000));
    const out: Int16Array[] = [];
    for (const [i, packet] of input.entries()) {
      if (i >= 20 && i < 25) path.noAudio({ ...packet, timestamp: input[20]!.timestamp });
      else path.push(packet);
      const frame = path.frame();
      if (frame) out.push(frame);
    }
    for (let frame = path.frame(); frame; frame = path.frame()) out.push(frame);
    expect(path.stats).toMatchObject({ lost: 0, concealed: 0, undecodable: 0 });
    const silent = out.flatMap((frame, i) => (frame.every((s) => s === 0) ? [i] : []));
    expect(silent).toHaveLength(5);
    expect(silent.at(-1)! - silent[0]!).toBe(4);
    expect(strongestFrequency(concat(out.slice(silent.at(-1)! + 2)), 16000)).toBe(1000);
  });

  it("rebuilds a lost packet from the next one's FEC data", () => {
    // 1 kHz, then 500 Hz from packet 25, which is lost: only FEC knows it is 500 Hz.
    const signal = concat([tone(16000, 1000, 0.5, 8000), tone(16000, 500, 0.5, 8000)]);
    const path = new InboundPath({ rate: 16000, formats: [OPUS] });
    const frames = run(path, opusPackets(signal), new Set([25]));
    expect(frames).toHaveLength(50);
    expect(path.stats).toMatchObject({ lost: 1, concealed: 1, fecDecoded: 1 });
    const rebuilt = frames[25]!;
    expect(strongestFrequency(rebuilt, 16000)).toBe(500);
    expect(powerAt(rebuilt, 16000, 500)).toBeGreaterThan(10 * powerAt(rebuilt, 16000, 1000));
  });

  it('conceals with Opus PLC when the next packet is missing too, and rebuilds a corrupt packet', () => {
    const packets = opusPackets(tone(16000, 1000, 1, 8000));
    // Packet 30 arrives as garbage libopus refuses (a code 3 TOC with no frame count).
    packets[30] = { ...packets[30]!, payload: new Uint8Array([0x0b]) };
    const path = new InboundPath({ rate: 16000, formats: [OPUS] });
    const frames = run(path, packets, new Set([20, 21]), 3);
    expect(frames).toHaveLength(50);
    // Packet 21 comes back from 22's FEC data, and the corrupt 30 from 31's.
    expect(path.stats).toMatchObject({ lost: 2, concealed: 3, undecodable: 1, fecDecoded: 2 });
    // The first of the two lost is Opus's concealment, carrying the tone on.
    expect(strongestFrequency(frames[20]!, 16000)).toBe(1000);
    expect(energyDbfs(frames[20]!)).toBeGreaterThan(-30);
    expect(strongestFrequency(frames[30]!, 16000)).toBe(1000);
  });

  it('gives a packet tap each packet as it arrives, decoded by a decoder of its own', () => {
    const path = new InboundPath({ rate: 16000, formats: [OPUS] });
    const tapped: Int16Array[] = [];
    path.onDecoded = (pcm) => tapped.push(pcm);
    const frames = run(path, opusPackets(tone(16000, 700, 0.5, 8000)));
    expect(tapped).toHaveLength(25);
    expect(frames).toHaveLength(25);
    expect(strongestFrequency(concat(tapped).subarray(1600), 16000)).toBe(700);
    expect(strongestFrequency(concat(frames).subarray(1600), 16000)).toBe(700);
  });

  describe('with a packet tap, decodes each packet once', () => {
    /**
     * Runs the packets through a path with a tap: the tapped audio, the frames, and how many
     * frames are the very audio the tap was given (one decode for both, not one each).
     */
    function tapped(input: InboundPacket[], skip = new Set<number>(), lead = 3) {
      // Packets arrive `lead` ahead of their turn, which the buffer's depth then holds (more
      // than its depth, standing, would be delay it drops).
      const path = new InboundPath({
        rate: 16000,
        formats: [OPUS],
        jitter: { minDepth: lead + 1 },
      });
      const heard: Int16Array[] = [];
      path.onDecoded = (pcm) => heard.push(pcm);
      const frames = run(path, input, skip, lead);
      const buffers = new Set(heard.map((pcm) => pcm.buffer));
      const shared = frames.filter((frame) => buffers.has(frame.buffer)).length;
      return { path, heard, frames, shared };
    }

    it('in order: the tap and the frames hear the same audio from one decode a packet', () => {
      const input = opusPackets(tone(16000, 700, 1, 8000));
      const { heard, frames, shared } = tapped(input);
      expect(heard).toHaveLength(50);
      expect(frames).toHaveLength(50);
      expect(concat(heard)).toEqual(concat(frames));
      // The packets that came before playout started are decoded twice (the tap cannot wait),
      // every other one once.
      expect(shared).toBeGreaterThanOrEqual(50 - 4);
    });

    it("after a loss: the lost packet is rebuilt from the next one's FEC, then one decode a packet", () => {
      const signal = concat([tone(16000, 1000, 1, 8000), tone(16000, 500, 1, 8000)]);
      const { path, heard, frames, shared } = tapped(opusPackets(signal), new Set([50]));
      expect(path.stats).toMatchObject({ lost: 1, concealed: 1, fecDecoded: 1 });
      expect(frames).toHaveLength(100);
      expect(strongestFrequency(frames[50]!, 16000)).toBe(500);
      expect(heard).toHaveLength(99);
      // The packets held while the lost one was awaited are decoded twice as well.
      expect(shared).toBeGreaterThanOrEqual(99 - 4 - 4);
      expect(concat(heard.slice(60))).toEqual(concat(frames.slice(61)));
    });

    it('a corrupt packet and two lost ones are rebuilt as without a tap', () => {
      const packets = opusPackets(tone(16000, 1000, 1, 8000));
      packets[30] = { ...packets[30]!, payload: new Uint8Array([0x0b]) };
      const { path, heard, frames } = tapped(packets, new Set([20, 21]));
      expect(frames).toHaveLength(50);
      expect(path.stats).toMatchObject({ lost: 2, concealed: 3, undecodable: 1, fecDecoded: 2 });
      expect(strongestFrequency(frames[30]!, 16000)).toBe(1000);
      expect(energyDbfs(frames[30]!)).toBeGreaterThan(-30);
      // Neither the corrupt packet nor the lost ones reach the tap.
      expect(heard).toHaveLength(47);
    });

    it('two packets swapped on the way: both played in order, nothing concealed', () => {
      const input = opusPackets(tone(16000, 700, 1, 8000));
      const swapped = [...input];
      [swapped[20], swapped[21]] = [input[21]!, input[20]!];
      const { path, heard, frames, shared } = tapped(swapped);
      const plain = run(
        new InboundPath({ rate: 16000, formats: [OPUS], jitter: { minDepth: 4 } }),
        input,
        new Set(),
        3,
      );
      expect(path.stats).toMatchObject({ lost: 0, concealed: 0 });
      expect(heard).toHaveLength(50);
      expect(concat(frames)).toEqual(concat(plain));
      expect(shared).toBeGreaterThanOrEqual(50 - 4 - 4);
    });
  });
});
