import { describe, expect, it } from 'vitest';
import { OpusDecoder, OpusEncoder } from '../../../../src/media/codec/opus.js';
import { payloadCodec, type AudioFormat } from '../../../../src/media/pipeline/audio-format.js';
import { sineSnrDb, strongestFrequency, tone } from '../../../support/signal.js';

/**
 * What a leg's Opus sends through digital silence (a bot not speaking, nothing playing): the
 * encoder codes the first frames of it, then its last packet goes again; the peer decodes
 * silence, and the audio after it as well as if every frame had been coded.
 */
const OPUS: AudioFormat = { encoding: 'opus', payloadType: 111, rate: 16000 };
const FRAME = 320;

function framesOf(pcm: Int16Array): Int16Array[] {
  const frames: Int16Array[] = [];
  for (let at = 0; at + FRAME <= pcm.length; at += FRAME) frames.push(pcm.slice(at, at + FRAME));
  return frames;
}

/** 1 s of a 1 kHz tone, `silentSeconds` of zeros, 1 s of the tone: 20 ms frames. */
function toneSilenceTone(silentSeconds: number): Int16Array[] {
  const burst = framesOf(tone(16000, 1000, 1, 8000));
  const silence = Array.from({ length: silentSeconds * 50 }, () => new Int16Array(FRAME));
  return [...burst, ...silence, ...burst];
}

const decodeAll = (packets: Uint8Array[]) => {
  const decoder = new OpusDecoder(16000);
  return packets.map((p) => decoder.decode(p));
};
const joined = (frames: Int16Array[]) => Int16Array.from(frames.flatMap((f) => [...f]));

describe("a leg's Opus through digital silence", () => {
  it('codes its first 10 frames, then sends the last of them again until audio comes back', () => {
    const frames = toneSilenceTone(3);
    const codec = payloadCodec(OPUS);
    const sent = frames.map((frame) => Buffer.from(codec.encode(frame)).toString('hex'));
    const silent = sent.slice(50, 200);
    // Every frame still goes: the peer's clock and jitter buffer see no gap.
    expect(sent).toHaveLength(250);
    expect(new Set(silent.slice(10)).size).toBe(1);
    expect(silent[10]).toBe(silent[9]);
    // And a packet of silence it is: a few bytes, decoding to nothing.
    expect(silent[10]!.length / 2).toBeLessThanOrEqual(8);
    const heard = decodeAll(sent.map((hex) => Buffer.from(hex, 'hex')));
    const quiet = joined(heard.slice(70, 200));
    expect(Math.max(...quiet.map(Math.abs))).toBeLessThan(50);
    // The first frame of the tone again is coded, not replayed.
    expect(sent[200]).not.toBe(silent[149]);
  });

  it('is heard after the silence as well as when every frame is coded', () => {
    const frames = toneSilenceTone(3);
    const codec = payloadCodec(OPUS);
    const skipped = decodeAll(frames.map((frame) => new Uint8Array(codec.encode(frame))));
    // The reference: an encoder of the same settings that codes every frame.
    const encoder = new OpusEncoder(16000, { bitrate: 24000, expectedLossPercent: 0 });
    const coded = decodeAll(frames.map((frame) => encoder.encode(frame)));
    const after = (decoded: Int16Array[]) => joined(decoded.slice(205, 250));
    expect(Math.abs(strongestFrequency(after(skipped), 16000) - 1000)).toBeLessThanOrEqual(50);
    expect(sineSnrDb(after(skipped), 16000, 1000)).toBeGreaterThan(
      sineSnrDb(after(coded), 16000, 1000) - 1,
    );
    // Its first frames too: the tone's onset is not smeared by the skipped frames.
    const onset = (decoded: Int16Array[]) => joined(decoded.slice(201, 205));
    expect(sineSnrDb(onset(skipped), 16000, 1000)).toBeGreaterThan(
      sineSnrDb(onset(coded), 16000, 1000) - 3,
    );
  });

  it('codes every frame of audio that is quiet but not silent', () => {
    const codec = payloadCodec(OPUS);
    const hiss = Array.from({ length: 50 }, (_, n) =>
      Int16Array.from({ length: FRAME }, (_, i) => ((n * FRAME + i) % 3) - 1),
    );
    const sent = hiss.map((frame) => Buffer.from(codec.encode(frame)).toString('hex'));
    const encoder = new OpusEncoder(16000, { bitrate: 24000, expectedLossPercent: 0 });
    expect(sent).toEqual(hiss.map((frame) => encoder.encode(frame).toString('hex')));
  });
});
