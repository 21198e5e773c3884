import { describe, expect, it, vi } from 'vitest';
import {
  parseRtpPacket,
  RtpParseError,
  serializeRtpPacket,
  type RtpParseErrorReason,
} from '../../../../src/media/rtp/rtp-packet.js';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

function expectParseError(data: Uint8Array, reason: RtpParseErrorReason): void {
  try {
    parseRtpPacket(data);
  } catch (error) {
    expect(error).toBeInstanceOf(RtpParseError);
    expect((error as RtpParseError).reason).toBe(reason);
    return;
  }
  throw new Error(`expected a ${reason} error`);
}

describe('RTP packet codec', () => {
  it('parses a plain PCMU packet byte for byte', () => {
    // V=2, PT 0, marker, seq 0x1234, ts 0xdeadbeef, SSRC 0x01020304, 4 payload bytes.
    const data = hex('80 80 1234 deadbeef 01020304 ffff7f00');
    const packet = parseRtpPacket(data);
    expect(packet).toMatchObject({
      marker: true,
      payloadType: 0,
      sequenceNumber: 0x1234,
      timestamp: 0xdeadbeef,
      ssrc: 0x01020304,
      csrcs: [],
      paddingLength: 0,
    });
    expect(packet.extension).toBeUndefined();
    expect(Buffer.from(packet.payload)).toEqual(hex('ffff7f00'));
    expect(serializeRtpPacket(packet)).toEqual(data);
  });

  it('keeps the payload as a view into the datagram', () => {
    const data = hex('80 00 0001 00000001 00000002 aabbcc');
    const packet = parseRtpPacket(data);
    expect(packet.payload.buffer).toBe(data.buffer);
    expect(packet.payload.byteOffset).toBe(data.byteOffset + 12);
  });

  it('round-trips CSRCs, an extension and padding together', () => {
    const data = hex(
      'b2 e0 ffff ffffffff cafebabe' + // P, X, CC=2, marker, PT 96
        '11111111 22222222' + // CSRCs
        'bede 0002 10ff0000 20aabb00' + // extension: profile, two words
        '0102030405' + // payload
        '000003', // three octets of padding
    );
    const packet = parseRtpPacket(data);
    expect(packet.csrcs).toEqual([0x11111111, 0x22222222]);
    expect(packet.extension?.profile).toBe(0xbede);
    expect(Buffer.from(packet.extension!.data)).toEqual(hex('10ff0000 20aabb00'));
    expect(Buffer.from(packet.payload)).toEqual(hex('0102030405'));
    expect(packet.paddingLength).toBe(3);
    expect(packet.marker).toBe(true);
    expect(packet.payloadType).toBe(96);
    expect(serializeRtpPacket(packet)).toEqual(data);
  });

  it('writes every byte of a packet, padding included, whatever its memory held', () => {
    // Packets are cut from Node's pool, whose memory is not cleared: hand it a dirty one.
    vi.spyOn(Buffer, 'allocUnsafe').mockImplementation((size) => Buffer.alloc(size, 0xaa));
    const data = hex(
      'b2 e0 ffff ffffffff cafebabe 11111111 22222222 bede0002 10ff0000 20aabb00 0102030405 000003',
    );
    try {
      expect(serializeRtpPacket(parseRtpPacket(data))).toEqual(data);
      expect(Buffer.allocUnsafe).toHaveBeenCalled();
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('builds what it parses for many random packets', () => {
    for (let i = 0; i < 200; i++) {
      const fields = {
        marker: i % 2 === 0,
        payloadType: i % 128,
        sequenceNumber: (i * 331) & 0xffff,
        timestamp: (i * 0x9e3779b9) >>> 0,
        ssrc: (i * 0x85ebca6b) >>> 0,
        csrcs: Array.from({ length: i % 16 }, (_, k) => k * 7),
        payload: Uint8Array.from({ length: i % 50 }, (_, k) => k),
        paddingLength: i % 5,
        ...(i % 3 === 0 ? { extension: { profile: i, data: new Uint8Array((i % 4) * 4) } } : {}),
      };
      const parsed = parseRtpPacket(serializeRtpPacket(fields));
      expect({ ...parsed, payload: Array.from(parsed.payload) }).toMatchObject({
        ...fields,
        payload: Array.from(fields.payload),
        ...(fields.extension ? { extension: { profile: i } } : {}),
      });
    }
  });

  it('refuses a packet shorter than the header', () => {
    expectParseError(hex('80 00 0001 00000001 000000'), 'too-short');
    expectParseError(new Uint8Array(0), 'too-short');
  });

  it('refuses versions other than 2', () => {
    expectParseError(hex('40 00 0001 00000001 00000002'), 'bad-version');
    expectParseError(hex('c0 00 0001 00000001 00000002'), 'bad-version');
  });

  it('refuses a CSRC count running past the end', () => {
    expectParseError(hex('83 00 0001 00000001 00000002 11111111 22222222'), 'csrc-past-end');
  });

  it('refuses an extension header or body running past the end', () => {
    expectParseError(hex('90 00 0001 00000001 00000002 bede'), 'extension-past-end');
    expectParseError(hex('90 00 0001 00000001 00000002 bede0002 00000000'), 'extension-past-end');
  });

  it('refuses padding counts of zero or past the body', () => {
    expectParseError(hex('a0 00 0001 00000001 00000002 aabb00'), 'bad-padding');
    expectParseError(hex('a0 00 0001 00000001 00000002 aabb04'), 'bad-padding');
    // A padding count reaching back into the header is as wrong.
    expectParseError(hex('a0 00 0001 00000001 00000002 0d'), 'bad-padding');
    expect(parseRtpPacket(hex('a0 00 0001 00000001 00000002 aabb03')).payload.length).toBe(0);
  });

  it('checks fields at the edge when serialising', () => {
    const base = {
      payloadType: 0,
      sequenceNumber: 0,
      timestamp: 0,
      ssrc: 0,
      payload: new Uint8Array(),
    };
    expect(() => serializeRtpPacket({ ...base, payloadType: 128 })).toThrow(/payloadType/);
    expect(() => serializeRtpPacket({ ...base, sequenceNumber: 65536 })).toThrow(/sequenceNumber/);
    expect(() => serializeRtpPacket({ ...base, csrcs: new Array(16).fill(0) })).toThrow(/CSRC/);
    expect(() =>
      serializeRtpPacket({ ...base, extension: { profile: 0, data: new Uint8Array(3) } }),
    ).toThrow(/32-bit words/);
  });
});
