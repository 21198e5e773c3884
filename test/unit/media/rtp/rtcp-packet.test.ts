import { describe, expect, it } from 'vitest';
import {
  cnameChunk,
  cnameOf,
  parseRtcpCompound,
  RtcpParseError,
  serializeRtcpCompound,
  type RtcpPacket,
} from '../../../../src/media/rtp/rtcp-packet.js';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

const block = {
  ssrc: 0xaabbccdd,
  fractionLost: 200,
  cumulativeLost: -3,
  extendedHighestSequence: 0x0001_0005,
  jitter: 42,
  lastSenderReport: 0x12345678,
  delaySinceLastSenderReport: 65536,
};

describe('RTCP packets', () => {
  it('round-trips a compound SR, SDES CNAME and BYE', () => {
    const packets: RtcpPacket[] = [
      {
        type: 'sr',
        ssrc: 1,
        ntp: { seconds: 0xe0000000, fraction: 0x80000000 },
        rtpTimestamp: 0xfffffff0,
        packetCount: 50,
        octetCount: 8000,
        reports: [block],
      },
      { type: 'sdes', chunks: [cnameChunk(1, 'voxgate@example')] },
      { type: 'bye', ssrcs: [1], reason: 'call ended' },
    ];
    const data = serializeRtcpCompound(packets);
    expect(data.length % 4).toBe(0);
    expect(parseRtcpCompound(data)).toEqual(packets);
    const sdes = parseRtcpCompound(data)[1];
    expect(sdes?.type === 'sdes' && cnameOf(sdes, 1)).toBe('voxgate@example');
  });

  it('round-trips an RR with several blocks and an empty RR', () => {
    const packets: RtcpPacket[] = [
      { type: 'rr', ssrc: 9, reports: [block, { ...block, ssrc: 2, cumulativeLost: 0x7fffff }] },
      { type: 'rr', ssrc: 9, reports: [] },
      { type: 'bye', ssrcs: [9, 10] },
    ];
    expect(parseRtcpCompound(serializeRtcpCompound(packets))).toEqual(packets);
  });

  it('writes an RR byte for byte', () => {
    const data = serializeRtcpCompound([{ type: 'rr', ssrc: 0x01020304, reports: [block] }]);
    expect(data).toEqual(
      hex('81 c9 0007 01020304 aabbccdd c8fffffd 00010005 0000002a 12345678 00010000'),
    );
  });

  it('reads padding and skips unknown packet types', () => {
    // An RR with no blocks followed by an APP-like packet (204) padded by four octets.
    const data = hex('80 c9 0001 00000001  a0 cc 0002 41424344 00000004');
    expect(parseRtcpCompound(data)).toEqual([
      { type: 'rr', ssrc: 1, reports: [] },
      { type: 'unknown', packetType: 204, body: new Uint8Array(hex('41424344')) },
    ]);
  });

  it.each([
    ['too short', '80c9'],
    ['bad version', '41 c9 0001 00000001'],
    ['length past the end', '80 c9 0005 00000001'],
    ['report blocks past the end', '81 c9 0001 00000001'],
    ['trailing bytes', '80 c9 0001 00000001 80'],
    ['padding count zero', 'a0 c9 0001 00000000'],
    ['SDES without terminator', '81 ca 0002 00000001 0105616263'.padEnd(24, '6')],
    ['BYE reason past the end', '81 cb 0002 00000001 09616263'],
  ])('refuses %s', (_name, text) => {
    expect(() => parseRtcpCompound(hex(text))).toThrow(RtcpParseError);
  });
});
