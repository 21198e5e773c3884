import { describe, expect, it } from 'vitest';
import { RtpSendStream } from '../../../../src/media/rtp/send-stream.js';
import { ntpFromUnixMs, ntpMiddle } from '../../../../src/media/rtp/ntp-time.js';
import { seededRandom } from '../../../support/prng.js';

describe('RTP send stream', () => {
  it('starts SSRC, sequence and timestamp at random values', () => {
    const a = new RtpSendStream({ clockRate: 8000 });
    const b = new RtpSendStream({ clockRate: 8000 });
    expect(a.ssrc).not.toBe(b.ssrc);
    const random = seededRandom(3);
    const seeded = new RtpSendStream({
      clockRate: 8000,
      random: () => Math.floor(random() * 2 ** 32),
    });
    expect(seeded.ssrc).toBeGreaterThanOrEqual(0);
    expect(seeded.ssrc).toBeLessThan(2 ** 32);
  });

  it('advances by samples per frame and wraps sequence at 2^16 and timestamp at 2^32', () => {
    const stream = new RtpSendStream({
      clockRate: 8000,
      ssrc: 1,
      initialSequence: 65534,
      initialTimestamp: 2 ** 32 - 320,
    });
    const positions = [0, 1, 2, 3].map((i) => stream.advance(160, 160, i * 20));
    expect(positions).toEqual([
      { sequenceNumber: 65534, timestamp: 2 ** 32 - 320 },
      { sequenceNumber: 65535, timestamp: 2 ** 32 - 160 },
      { sequenceNumber: 0, timestamp: 0 },
      { sequenceNumber: 1, timestamp: 160 },
    ]);
    expect(stream.packetCount).toBe(4);
    expect(stream.octetCount).toBe(640);
    // 10 ms after the last packet the media clock has moved 80 units.
    expect(stream.timestampAt(70)).toBe(240);
  });

  it('refuses a clock rate that is not a positive integer', () => {
    expect(() => new RtpSendStream({ clockRate: 0 })).toThrow(/clockRate/);
  });
});

describe('NTP time', () => {
  it('converts Unix milliseconds and takes the middle 32 bits', () => {
    const ntp = ntpFromUnixMs(1_500);
    expect(ntp).toEqual({ seconds: 2_208_988_801, fraction: 2 ** 31 });
    expect(ntpMiddle(ntp)).toBe((((2_208_988_801 & 0xffff) << 16) | 0x8000) >>> 0);
  });
});
