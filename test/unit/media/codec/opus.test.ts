import { describe, expect, it } from 'vitest';
import {
  OPUS_RATES,
  OpusDecoder,
  OpusEncoder,
  OpusError,
  opusPacketSamples,
} from '../../../../src/media/codec/opus.js';
import { energyDbfs } from '../../../../src/media/codec/pcm-frame.js';
import { seededRandom } from '../../../support/prng.js';
import { concat, powerAt, sineSnrDb, strongestFrequency, tone } from '../../../support/signal.js';

const RATE = 16000;
const FRAME = RATE / 50;

function frames(pcm: Int16Array, size = FRAME): Int16Array[] {
  const out: Int16Array[] = [];
  for (let at = 0; at + size <= pcm.length; at += size) out.push(pcm.subarray(at, at + size));
  return out;
}

function encodeAll(encoder: OpusEncoder, pcm: Int16Array): Buffer[] {
  return frames(pcm, (encoder.rate / 50) | 0).map((frame) => encoder.encode(frame));
}

describe('OpusEncoder and OpusDecoder', () => {
  it('keep a 1 kHz tone at 16 kHz at its frequency and level', () => {
    const input = tone(RATE, 1000, 1, 8000);
    const decoder = new OpusDecoder(RATE);
    const packets = encodeAll(new OpusEncoder(RATE), input);
    expect(packets).toHaveLength(50);
    // RFC 7587 4.1: the timestamp counts 48 kHz whatever the rate coded: 960 per 20 ms.
    for (const packet of packets) expect(opusPacketSamples(packet, 48000)).toBe(960);
    const decoded = packets.map((packet) => decoder.decode(packet));
    for (const frame of decoded) expect(frame.length).toBe(FRAME);
    // The first 100 ms hold the codec's delay and start-up.
    const settled = concat(decoded).subarray(RATE / 10);
    expect(strongestFrequency(settled, RATE)).toBe(1000);
    expect(Math.abs(energyDbfs(settled) - energyDbfs(input))).toBeLessThan(1);
    expect(sineSnrDb(settled, RATE, 1000)).toBeGreaterThan(20);
  });

  for (const rate of OPUS_RATES) {
    it(`encodes and decodes 20 ms frames at ${rate} Hz with no resampling around it`, () => {
      const hz = 600;
      const decoder = new OpusDecoder(rate);
      const decoded = encodeAll(new OpusEncoder(rate), tone(rate, hz, 0.5, 8000)).map((p) =>
        decoder.decode(p),
      );
      for (const frame of decoded) expect(frame.length).toBe(rate / 50);
      expect(strongestFrequency(concat(decoded).subarray(rate / 10), rate)).toBe(hz);
    });
  }

  it('makes up a lost packet from the FEC copy in the next one, where concealment guesses', () => {
    // 1 kHz for 0.5 s, then 500 Hz: the lost packet is the first of the 500 Hz, which only
    // the FEC data knows; concealment carries the 1 kHz on.
    const signal = concat([tone(RATE, 1000, 0.5, 8000), tone(RATE, 500, 0.5, 8000)]);
    const packets = encodeAll(new OpusEncoder(RATE, { expectedLossPercent: 10 }), signal);
    const lost = 25;
    const rebuild = (recover: (decoder: OpusDecoder) => Int16Array): Int16Array => {
      const decoder = new OpusDecoder(RATE);
      for (let i = 0; i < lost; i++) decoder.decode(packets[i]!);
      const made = recover(decoder);
      decoder.decode(packets[lost + 1]!);
      return made;
    };
    const fromFec = rebuild((decoder) => decoder.decodeFec(packets[lost + 1]!, FRAME));
    const concealed = rebuild((decoder) => decoder.conceal(FRAME));
    expect(fromFec.length).toBe(FRAME);
    expect(concealed.length).toBe(FRAME);
    expect(strongestFrequency(fromFec, RATE)).toBe(500);
    expect(strongestFrequency(concealed, RATE)).toBe(1000);
    expect(powerAt(fromFec, RATE, 500)).toBeGreaterThan(10 * powerAt(concealed, RATE, 500));
  });

  it('conceals missing packets by carrying the tone on, fading over a run of them', () => {
    const decoder = new OpusDecoder(RATE);
    for (const packet of encodeAll(new OpusEncoder(RATE), tone(RATE, 1000, 0.5, 8000))) {
      decoder.decode(packet);
    }
    const run = Array.from({ length: 10 }, () => decoder.conceal(FRAME));
    expect(run.map((frame) => frame.length)).toEqual(Array(10).fill(FRAME));
    expect(strongestFrequency(run[0]!, RATE)).toBe(1000);
    expect(energyDbfs(run[9]!)).toBeLessThan(energyDbfs(run[0]!) - 10);
    // Other lengths of loss, in steps of 2.5 ms.
    expect(decoder.conceal(40).length).toBe(40);
    expect(decoder.conceal(960).length).toBe(960);
  });

  it('with DTX sends silence as 1-byte packets, which decode, as an empty one does, to 20 ms', () => {
    const encoder = new OpusEncoder(RATE, { dtx: true });
    const decoder = new OpusDecoder(RATE);
    const sizes = Array.from({ length: 50 }, () => encoder.encode(new Int16Array(FRAME)));
    const small = sizes.filter((packet) => packet.length <= 2);
    expect(small.length).toBeGreaterThan(30);
    for (const packet of sizes) {
      const pcm = decoder.decode(packet);
      expect(pcm.length).toBe(FRAME);
      expect(energyDbfs(pcm)).toBeLessThan(-60);
    }
    expect(decoder.decode(new Uint8Array(0)).length).toBe(FRAME);
    expect(decoder.decodeFec(new Uint8Array(0), FRAME).length).toBe(FRAME);
  });

  it('survives 5000 garbage packets: each decodes to whole 2.5 ms steps or is an OpusError', () => {
    const random = seededRandom(7587);
    const decoder = new OpusDecoder(RATE);
    let decoded = 0;
    const codes = new Map<number, number>();
    for (let i = 0; i < 5000; i++) {
      const packet = Buffer.alloc(1 + Math.floor(random() * 300));
      for (let j = 0; j < packet.length; j++) packet[j] = Math.floor(random() * 256);
      try {
        const pcm = i % 2 === 0 ? decoder.decode(packet) : decoder.decodeFec(packet, FRAME);
        expect(pcm.length % (RATE / 400)).toBe(0);
        expect(pcm.length).toBeLessThanOrEqual((RATE * 120) / 1000);
        decoded++;
      } catch (error) {
        expect(error).toBeInstanceOf(OpusError);
        const code = (error as OpusError).code;
        expect(code).toBeLessThan(0);
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
    }
    const refused = [...codes.values()].reduce((a, b) => a + b, 0);
    expect(decoded + refused).toBe(5000);
    expect(refused).toBeGreaterThan(0);
    // OPUS_INVALID_PACKET (-4) is libopus's word for a corrupted packet.
    expect(codes.get(-4)).toBeGreaterThan(0);
    // And the decoder still decodes real audio afterwards.
    const real = encodeAll(new OpusEncoder(RATE), tone(RATE, 1000, 0.5, 8000));
    const after = concat(real.map((packet) => decoder.decode(packet))).subarray(RATE / 10);
    expect(strongestFrequency(after, RATE)).toBe(1000);
  });

  it('names what is wrong with its arguments', () => {
    expect(() => new OpusEncoder(44100 as never)).toThrow(
      'Expected one of 8000, 12000, 16000, 24000, 48000 (Hz) for rate but received 44100',
    );
    expect(() => new OpusEncoder(RATE, { bitrate: 1000 })).toThrow(
      'Expected an integer between 6000 and 510000 for bitrate but received 1000',
    );
    expect(() => new OpusEncoder(RATE).encode(new Int16Array(100))).toThrow(
      'Expected a frame of 40, 80, 160, 320, 640, 960 samples (2.5 to 60 ms at 16000 Hz) but received 100',
    );
    expect(() => new OpusDecoder(RATE).conceal(50)).toThrow(
      'Expected a multiple of 40 samples (2.5 ms at 16000 Hz) for samples but received 50',
    );
    expect(() => new OpusDecoder(RATE).decode('x' as never)).toThrow(
      'Expected a Uint8Array or Buffer for packet but received "x"',
    );
    expect(() => opusPacketSamples(new Uint8Array(0), 48000)).toThrow(OpusError);
    expect(() => new OpusEncoder(RATE).setComplexity(11)).toThrow(
      'Expected an integer between 0 and 10 for complexity but received 11',
    );
    expect(() => new OpusEncoder(RATE, { celtOnly: 'yes' as never })).toThrow(
      'Expected a boolean for celtOnly but received "yes"',
    );
  });

  it('codes CELT only when asked: every packet CELT (RFC 6716 3.1), the tone kept', () => {
    const input = tone(RATE, 1000, 1, 8000);
    // RFC 6716 3.1: TOC configurations 0-11 are SILK, 12-15 hybrid, 16-31 CELT.
    const config = (packet: Buffer) => packet[0]! >> 3;
    const voip = encodeAll(new OpusEncoder(RATE, { expectedLossPercent: 0 }), input);
    expect(voip.map(config).every((c) => c < 12)).toBe(true);
    const celt = encodeAll(new OpusEncoder(RATE, { celtOnly: true, complexity: 0 }), input);
    expect(celt.map(config).every((c) => c >= 16)).toBe(true);
    const decoder = new OpusDecoder(RATE);
    const heard = concat(celt.map((p) => decoder.decode(p))).subarray(FRAME * 5);
    expect(strongestFrequency(heard, RATE)).toBe(1000);
    expect(sineSnrDb(heard, RATE, 1000)).toBeGreaterThan(25);
  });

  it('changes complexity on a running encoder: its packets are those of one made at it', () => {
    const input = tone(RATE, 1000, 1, 8000);
    const changed = new OpusEncoder(RATE, { complexity: 5 });
    changed.setComplexity(0);
    const hex = (packets: Buffer[]) => packets.map((p) => p.toString('hex'));
    const sent = hex(encodeAll(changed, input));
    expect(sent).toEqual(hex(encodeAll(new OpusEncoder(RATE, { complexity: 0 }), input)));
    expect(sent).not.toEqual(hex(encodeAll(new OpusEncoder(RATE, { complexity: 5 }), input)));
  });

  it('changes bitrate on a running encoder', () => {
    const encoder = new OpusEncoder(RATE, { bitrate: 48000, fec: false });
    const input = tone(RATE, 1000, 1, 8000);
    const high = encodeAll(encoder, input).reduce((n, p) => n + p.length, 0);
    encoder.setBitrate(8000);
    const low = encodeAll(encoder, input).reduce((n, p) => n + p.length, 0);
    // 1 s of audio: the byte count is the bitrate over 8, give or take.
    expect(high).toBeGreaterThan(4000);
    expect(low).toBeLessThan(1500);
  });
});
