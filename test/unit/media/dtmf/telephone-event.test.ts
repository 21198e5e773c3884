import { describe, expect, it } from 'vitest';
import {
  decodeTelephoneEvent,
  DtmfParseError,
  DtmfReceiver,
  digitPackets,
  encodeTelephoneEvent,
  type ReceivedDigit,
  type TelephoneEventPacket,
} from '../../../../src/media/dtmf/index.js';
import { readPcapRtp } from '../../../support/pcap.js';

describe('the telephone-event payload (RFC 4733 2.3)', () => {
  it('round-trips event, E bit, volume and duration byte for byte', () => {
    const event = { event: 11, end: true, volume: 63, duration: 0xfedc };
    const bytes = encodeTelephoneEvent(event);
    expect([...bytes]).toEqual([11, 0x80 | 63, 0xfe, 0xdc]);
    expect(decodeTelephoneEvent(bytes)).toEqual(event);
    const start = { event: 1, end: false, volume: 10, duration: 0 };
    expect([...encodeTelephoneEvent(start)]).toEqual([1, 10, 0, 0]);
    expect(decodeTelephoneEvent(encodeTelephoneEvent(start))).toEqual(start);
  });

  it('ignores the reserved R bit and reads the first of redundant blocks', () => {
    expect(decodeTelephoneEvent(Uint8Array.of(5, 0x40 | 7, 0, 160, 4, 7, 0, 80))).toEqual({
      event: 5,
      end: false,
      volume: 7,
      duration: 160,
    });
  });

  it('refuses short payloads and out-of-range fields with specific messages', () => {
    expect(() => decodeTelephoneEvent(Uint8Array.of(1, 2, 3))).toThrow(DtmfParseError);
    expect(() => decodeTelephoneEvent(Uint8Array.of(1, 2, 3))).toThrow(
      'telephone-event payload is 3 bytes; it needs at least 4',
    );
    expect(() => encodeTelephoneEvent({ event: 1, end: false, volume: 64, duration: 0 })).toThrow(
      'Expected an integer between 0 and 63 for volume but received 64',
    );
    expect(() =>
      encodeTelephoneEvent({ event: 1, end: false, volume: 1, duration: 70000 }),
    ).toThrow('Expected an integer between 0 and 65535 for duration but received 70000');
  });
});

function packet(
  timestamp: number,
  event: number,
  duration: number,
  end = false,
  marker = false,
): TelephoneEventPacket {
  return {
    timestamp,
    marker,
    payload: encodeTelephoneEvent({ event, end, volume: 10, duration }),
  };
}

function receive(packets: readonly TelephoneEventPacket[]): ReceivedDigit[] {
  const receiver = new DtmfReceiver();
  return [...packets.flatMap((p) => receiver.process(p)), ...receiver.flush()];
}

describe('the RFC 4733 receiver', () => {
  it('reports each event once on a redundant, duplicated stream', () => {
    const digits = receive([
      packet(1000, 1, 160, false, true),
      packet(1000, 1, 160, false, true),
      packet(1000, 1, 320),
      packet(1000, 1, 480),
      packet(1000, 1, 640, true),
      packet(1000, 1, 640, true),
      packet(1000, 1, 640, true),
      packet(3000, 11, 160, false, true),
      packet(3000, 11, 320, true),
      packet(3000, 11, 320, true),
      packet(1000, 1, 640, true),
      packet(3000, 11, 320, true),
    ]);
    expect(digits).toEqual([
      { digit: '1', timestamp: 1000, duration: 640, durationMs: 80, volume: 10, ended: true },
      { digit: '#', timestamp: 3000, duration: 320, durationMs: 40, volume: 10, ended: true },
    ]);
  });

  it('reports an event whose start packets were lost', () => {
    expect(receive([packet(500, 7, 800, true), packet(500, 7, 800, true)])).toMatchObject([
      { digit: '7', duration: 800, ended: true },
    ]);
  });

  it('keeps the longest duration when updates come out of order', () => {
    expect(receive([packet(9, 3, 480), packet(9, 3, 320), packet(9, 3, 640, true)])).toMatchObject([
      { digit: '3', duration: 640 },
    ]);
  });

  it('closes an event whose end packets were all lost when the next begins, or on flush', () => {
    expect(
      receive([
        packet(100, 2, 160, false, true),
        packet(100, 2, 320),
        packet(900, 4, 160, false, true),
      ]),
    ).toMatchObject([
      { digit: '2', duration: 320, ended: false },
      { digit: '4', duration: 160, ended: false },
    ]);
  });

  it('tells apart two presses of the same key by their timestamps, across wraparound', () => {
    expect(
      receive([
        packet(0xffffff00, 5, 400, true),
        packet(0xffffff00, 5, 400, true),
        packet(0x00000100, 5, 400, true),
      ]).map((d) => [d.digit, d.timestamp]),
    ).toEqual([
      ['5', 0xffffff00],
      ['5', 0x100],
    ]);
  });

  it('reads a key held past one segment (RFC 4733 2.5.2.3, as libwebrtc sends it at 48 kHz) as one press', () => {
    const receiver = new DtmfReceiver(48_000);
    const start = 0xfffff000;
    const packets: TelephoneEventPacket[] = [];
    // 2 s of '5': the first segment runs its 16-bit duration out at 0xffff, and the rest goes
    // on in a segment timestamped where the first ends, without the marker.
    for (let d = 960; d < 0xffff; d += 960) packets.push(packet(start, 5, d, false, d === 960));
    packets.push(packet(start, 5, 0xffff));
    const second = (start + 0xffff) >>> 0;
    for (let d = 960; d <= 30_465; d += 960) packets.push(packet(second, 5, d));
    for (let i = 0; i < 3; i++) packets.push(packet(second, 5, 30_465, true));
    const digits = packets.flatMap((p) => receiver.process(p));
    expect(digits).toEqual([
      expect.objectContaining({ digit: '5', timestamp: start, duration: 96_000, ended: true }),
    ]);
    expect(digits[0]!.durationMs).toBe(2000);
    // Two presses of one key a moment apart stay two: the first never ran its segment out.
    expect(
      receive([packet(1000, 5, 800, true), packet(1800, 5, 800, true)]).map((d) => d.timestamp),
    ).toEqual([1000, 1800]);
  });

  it('ignores events that are not DTMF digits (flash, tones)', () => {
    expect(receive([packet(1, 16, 800, true), packet(2, 70, 800, true)])).toEqual([]);
  });

  it('reads the DTMF in the pcaps that ship with SIPp', () => {
    const files: [string, string][] = [
      ...'0123456789'.split('').map((d): [string, string] => [`dtmf_2833_${d}.pcap`, d]),
      ['dtmf_2833_pound.pcap', '#'],
      ['dtmf_2833_star.pcap', '*'],
    ];
    for (const [file, expected] of files) {
      const packets = readPcapRtp(`/usr/share/sip-tester/${file}`).filter(
        (rtp) => rtp.payloadType === 101,
      );
      expect(packets.length).toBeGreaterThan(3);
      const digits = receive(packets);
      expect(digits.map((d) => d.digit)).toEqual([expected]);
      expect(digits[0]).toMatchObject({ ended: true, volume: 10 });
      expect(digits[0]!.durationMs).toBeGreaterThan(40);
    }
  });
});

describe('the RFC 4733 sender', () => {
  it('sends the marker first, an update every 20 ms and three end packets', () => {
    const packets = digitPackets('9', { durationMs: 100, volume: 12 });
    expect(packets.map((p) => [p.atMs, p.marker, p.end, p.duration])).toEqual([
      [0, true, false, 160],
      [20, false, false, 320],
      [40, false, false, 480],
      [60, false, false, 640],
      [80, false, true, 800],
      [100, false, true, 800],
      [120, false, true, 800],
    ]);
    expect(packets.map((p) => decodeTelephoneEvent(p.payload))).toEqual(
      packets.map((p) => ({ event: 9, end: p.end, volume: 12, duration: p.duration })),
    );
  });

  it('counts durations in the stream clock and ends short tones at once', () => {
    const wide = digitPackets('*', { durationMs: 40, clockRate: 16000 });
    expect(wide.map((p) => [p.marker, p.end, p.duration])).toEqual([
      [true, false, 320],
      [false, true, 640],
      [false, true, 640],
      [false, true, 640],
    ]);
    expect(decodeTelephoneEvent(wide[0]!.payload).event).toBe(10);
  });

  it('is read back as the same digit by the receiver', () => {
    const receiver = new DtmfReceiver();
    const digits = digitPackets('D', { durationMs: 250 }).flatMap((p) =>
      receiver.process({ timestamp: 4321, marker: p.marker, payload: p.payload }),
    );
    expect(digits).toEqual([
      { digit: 'D', timestamp: 4321, duration: 2000, durationMs: 250, volume: 10, ended: true },
    ]);
  });

  it('refuses a tone longer than the 16-bit duration field holds', () => {
    expect(() => digitPackets('1', { durationMs: 9000 })).toThrow(
      'Expected a durationMs of at most 8191 but received 9000',
    );
    expect(() => digitPackets('1', { intervalMs: 0 })).toThrow(
      'Expected a positive number for intervalMs but received 0',
    );
  });
});
