import { describe, expect, it } from 'vitest';
import { muLawEncode } from '../../../../src/media/codec/g711.js';
import { l16ToNetwork } from '../../../../src/media/codec/pcm-frame.js';
import { InboundPath } from '../../../../src/media/pipeline/inbound-path.js';
import { chunks, concat, sineSnrDb, strongestFrequency, tone } from '../../../support/signal.js';

const PCMU = { encoding: 'PCMU' as const, payloadType: 0, rate: 8000 as const };

function packets(pcm: Int16Array, size: number, encode = muLawEncode, payloadType = 0) {
  return [...chunks(pcm, [size])].map((c, i) => ({
    payloadType,
    sequenceNumber: (65530 + i) & 0xffff,
    timestamp: (i * size) >>> 0,
    payload: encode(c),
  }));
}

/** Pushes one packet per `ptime` of elapsed frames and pulls a frame every 20 ms. */
function run(
  path: InboundPath,
  input: ReturnType<typeof packets>,
  ptimeMs: number,
  skip = new Set<number>(),
) {
  const out: Int16Array[] = [];
  let next = 0;
  for (let t = 0; t < input.length * ptimeMs + 200; t += 20) {
    while (next < input.length && next * ptimeMs <= t) {
      if (!skip.has(next)) path.push(input[next]!);
      next++;
    }
    const frame = path.frame();
    if (frame) out.push(frame);
  }
  return concat(out);
}

describe('InboundPath', () => {
  it('gives 20 ms frames whatever the packet length (30 ms packets here), across the sequence wrap', () => {
    const path = new InboundPath({ rate: 8000, formats: [PCMU] });
    const input = tone(8000, 1004, 2, 8000);
    const heard = run(path, packets(input, 240), 30);
    expect(heard.length).toBeGreaterThanOrEqual(input.length - 240);
    expect(sineSnrDb(heard.subarray(0, 15000), 8000, 1004)).toBeGreaterThan(35);
    expect(path.stats.lost).toBe(0);
  });

  it('takes a new RTP source at once, whatever its sequence numbers, as after a transfer', () => {
    const path = new InboundPath({ rate: 8000, formats: [PCMU] });
    const first = packets(tone(8000, 500, 1, 8000), 160).map((p) => ({ ...p, ssrc: 1 }));
    // The new source numbers its packets 1000 below the old one's: as one source, 20 s of
    // them would be late.
    const second = packets(tone(8000, 1000, 1, 8000), 160).map((p) => ({
      ...p,
      ssrc: 2,
      sequenceNumber: (p.sequenceNumber - 1000) & 0xffff,
      timestamp: (p.timestamp + 123_456) >>> 0,
    }));
    const heard = run(path, [...first, ...second], 20);
    expect(path.stats).toMatchObject({ late: 0, lost: 0 });
    expect(heard.length).toBeGreaterThanOrEqual(2 * 8000 - 3 * 160);
    expect(strongestFrequency(heard.subarray(8000 + 800, 2 * 8000 - 800), 8000)).toBe(1000);
  });

  it('plays silence, not a concealment, for the numbers of RFC 4733 events sent in place of audio', () => {
    const path = new InboundPath({ rate: 8000, formats: [PCMU] });
    const input = packets(tone(8000, 500, 1, 8000), 160).map((p) => ({ ...p, ssrc: 7 }));
    const out: Int16Array[] = [];
    for (const [i, packet] of input.entries()) {
      // Events of another source take no place in the audio's numbering.
      path.noAudio({ sequenceNumber: (packet.sequenceNumber + 3) & 0xffff, timestamp: 0, ssrc: 9 });
      // A key held for packets 20 to 24: the sender sends events in their place (RFC 4733 2.1).
      if (i >= 20 && i < 25) path.noAudio({ ...packet, timestamp: input[20]!.timestamp });
      else path.push(packet);
      const frame = path.frame();
      if (frame) out.push(frame);
    }
    for (let frame = path.frame(); frame; frame = path.frame()) out.push(frame);
    expect(path.stats).toMatchObject({ lost: 0, concealed: 0 });
    // Five frames of silence where the events were, the tone before and after.
    const silent = out.flatMap((frame, i) => (frame.every((s) => s === 0) ? [i] : []));
    expect(silent).toHaveLength(5);
    expect(silent.at(-1)! - silent[0]!).toBe(4);
    expect(strongestFrequency(concat(out.slice(silent.at(-1)! + 2)), 8000)).toBe(500);
  });

  it('conceals a lost packet instead of leaving a gap', () => {
    const path = new InboundPath({ rate: 8000, formats: [PCMU] });
    const heard = run(path, packets(tone(8000, 500, 1, 8000), 160), 20, new Set([20]));
    expect(path.stats.concealed).toBe(1);
    // The concealed frame repeats the tone at close to full level.
    const frame = heard.subarray(20 * 160, 21 * 160);
    expect(Math.max(...frame)).toBeGreaterThan(4000);
  });

  it('decodes L16 at 16 kHz and refuses payload types it was not given', () => {
    const path = new InboundPath({
      rate: 16000,
      formats: [{ encoding: 'L16', payloadType: 96, rate: 16000 }],
    });
    expect(path.frameSamples).toBe(320);
    const input = tone(16000, 1000, 0.5, 10000);
    const heard = run(path, packets(input, 320, l16ToNetwork, 96), 20);
    expect(Array.from(heard.subarray(0, 4000))).toEqual(Array.from(input.subarray(0, 4000)));
    expect(
      path.push({ payloadType: 0, sequenceNumber: 1, timestamp: 0, payload: new Uint8Array(160) }),
    ).toBe('unknown-payload-type');
    expect(path.stats.unknownPayloadType).toBe(1);
  });

  it("decodes a format at another rate than the call's to the call's rate (PCMU in a 16 kHz call)", () => {
    const path = new InboundPath({ rate: 16000, formats: [PCMU] });
    const heard = run(path, packets(tone(8000, 1000, 1, 8000), 160), 20);
    expect(heard.length).toBeGreaterThanOrEqual(15000);
    expect(strongestFrequency(heard.subarray(1600, 14000), 16000)).toBe(1000);
  });

  it('suppresses noise in the path when asked', () => {
    let seed = 7;
    const noise = Int16Array.from({ length: 16000 }, () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return (seed % 4001) - 2000;
    });
    const level = (pcm: Int16Array) => Math.sqrt(pcm.reduce((s, v) => s + v * v, 0) / pcm.length);
    const plain = run(new InboundPath({ rate: 8000, formats: [PCMU] }), packets(noise, 160), 20);
    const cleaned = run(
      new InboundPath({ rate: 8000, formats: [PCMU], noiseCancellationLevel: 100 }),
      packets(noise, 160),
      20,
    );
    // After the suppressor has learnt the noise (first half second), it is at least 15 dB down.
    const tail = (pcm: Int16Array) => pcm.subarray(8000, 15000);
    expect(20 * Math.log10(level(tail(plain)) / level(tail(cleaned)))).toBeGreaterThan(15);
  });
});
