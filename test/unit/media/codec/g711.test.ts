import { describe, expect, it } from 'vitest';
import {
  aLawDecode,
  aLawEncode,
  muLawDecode,
  muLawEncode,
} from '../../../../src/media/codec/g711.js';

const everySample = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
const everyCode = Uint8Array.from({ length: 256 }, (_, i) => i);

/** Samples decoded further than `bound` from the input, or below their predecessor. */
function violations(decoded: Int16Array, bound: (x: number) => number): number[] {
  const bad: number[] = [];
  for (let i = 0; i < everySample.length; i++) {
    const x = everySample[i]!;
    const tooFar = Math.abs(decoded[i]! - x) > bound(x);
    const notMonotonic = i > 0 && decoded[i]! < decoded[i - 1]!;
    if (tooFar || notMonotonic) bad.push(x);
  }
  return bad;
}

describe('G.711 encoding', () => {
  it('encodes a view at an offset, and each call into bytes of its own', () => {
    const pcm = Int16Array.from({ length: 20 }, (_, i) => (i - 10) * 3000);
    const view = pcm.subarray(5, 15);
    for (const encode of [muLawEncode, aLawEncode]) {
      const first = encode(view);
      expect([...first]).toEqual([...encode(Int16Array.from(view))]);
      const second = encode(view);
      second.fill(0);
      expect([...first]).toEqual([...encode(Int16Array.from(view))]);
    }
  });
});

describe('G.711 mu-law', () => {
  it('encodes the known code points', () => {
    // Silence is 0xFF on the line (all bits inverted); the extremes are 0x80 and 0x00.
    expect([...muLawEncode(Int16Array.of(0, -1, 32767, -32768))]).toEqual([0xff, 0x7f, 0x80, 0x00]);
    // G.711 Table 2a (14-bit scale): decoder outputs 0, 33, 8031 and 8031 beyond the last step.
    expect([...muLawDecode(Uint8Array.of(0xff, 0x7f, 0xef, 0x80, 0x00))]).toEqual([
      0,
      0,
      33 * 4,
      8031 * 4,
      -8031 * 4,
    ]);
  });

  it('re-encodes every decoded code to itself (but negative zero)', () => {
    const again = muLawEncode(muLawDecode(everyCode));
    for (const code of everyCode) expect(again[code]).toBe(code === 0x7f ? 0xff : code);
  });

  it('keeps every sample within half a step, and is monotonic', () => {
    const decoded = muLawDecode(muLawEncode(everySample));
    expect(violations(decoded, (x) => (Math.abs(x) > 32124 ? 1024 : Math.abs(x) / 16 + 4))).toEqual(
      [],
    );
  });
});

describe('G.711 A-law', () => {
  it('encodes the known code points', () => {
    // Even bits inverted (XOR 0x55), sign bit set for positive: silence is 0xD5.
    expect([...aLawEncode(Int16Array.of(0, -1, 32767, -32768))]).toEqual([0xd5, 0x55, 0xaa, 0x2a]);
    // G.711 Table 1a (13-bit scale): decoder outputs 1, 4032 at the extremes, 33 at segment 1.
    expect([...aLawDecode(Uint8Array.of(0xd5, 0x55, 0xaa, 0x2a, 0xc5))]).toEqual([
      8,
      -8,
      4032 * 8,
      -4032 * 8,
      33 * 8,
    ]);
  });

  it('re-encodes every decoded code to itself', () => {
    const again = aLawEncode(aLawDecode(everyCode));
    for (const code of everyCode) expect(again[code]).toBe(code);
  });

  it('keeps every sample within half a step, and is monotonic', () => {
    const decoded = aLawDecode(aLawEncode(everySample));
    expect(violations(decoded, (x) => (Math.abs(x) > 32256 ? 1024 : Math.abs(x) / 32 + 8))).toEqual(
      [],
    );
  });

  it('returns a Buffer of one byte per sample', () => {
    const out = aLawEncode(new Int16Array(160));
    expect(Buffer.isBuffer(out)).toBe(true);
    expect(out.length).toBe(160);
  });
});
