import { describe, expect, it } from 'vitest';
import {
  energyDbfs,
  gain,
  l16FromNetwork,
  l16ToNetwork,
  mix,
} from '../../../../src/media/codec/pcm-frame.js';
import { tone } from '../../../support/signal.js';

describe('L16 byte order', () => {
  it('sends the most significant byte first (RFC 3551 4.5.11)', () => {
    const payload = l16ToNetwork(Int16Array.of(0x0102, -2, 32767, -32768));
    expect([...payload]).toEqual([0x01, 0x02, 0xff, 0xfe, 0x7f, 0xff, 0x80, 0x00]);
    expect([...l16FromNetwork(payload)]).toEqual([0x0102, -2, 32767, -32768]);
  });

  it('reads a payload at any byte offset', () => {
    const bytes = Buffer.from([0xaa, 0x12, 0x34, 0xff, 0xff]).subarray(1);
    expect([...l16FromNetwork(bytes)]).toEqual([0x1234, -1]);
  });
});

describe('mix', () => {
  it('sums the frames and saturates at the 16-bit limits', () => {
    const a = Int16Array.of(1000, 30000, -30000, 5);
    const b = Int16Array.of(-500, 30000, -30000, 5);
    const c = Int16Array.of(0, -30000, 0, 5);
    expect([...mix([a, b])]).toEqual([500, 32767, -32768, 10]);
    // Saturation happens once, after the sum: 30000 + 30000 - 30000 is not clipped on the way.
    expect([...mix([a, b, c])]).toEqual([500, 30000, -32768, 15]);
  });
});

describe('gain', () => {
  it('scales by a gain in dB, rounding and saturating', () => {
    expect([...gain(Int16Array.of(1000, -1000, 20000), 6.0206)]).toEqual([2000, -2000, 32767]);
    expect([...gain(Int16Array.of(1000, -1002), -6.0206)]).toEqual([500, -501]);
  });
});

describe('energyDbfs', () => {
  it('measures RMS against full scale', () => {
    expect(energyDbfs(new Int16Array(160).fill(-32768))).toBeCloseTo(0, 5);
    expect(energyDbfs(tone(8000, 1004, 1, 32767))).toBeCloseTo(-3.01, 2);
    expect(energyDbfs(tone(8000, 1004, 1, 3277))).toBeCloseTo(-23.01, 1);
    expect(energyDbfs(new Int16Array(160))).toBe(-Infinity);
  });
});
