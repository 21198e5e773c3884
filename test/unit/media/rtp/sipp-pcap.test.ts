import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRtpPacket, serializeRtpPacket } from '../../../../src/media/rtp/rtp-packet.js';
import { readPcapUdp } from '../../../support/pcap.js';

/** The captures that ship with SIPp for play_pcap_audio. */
const SIPP_PCAPS = '/usr/share/sip-tester';
const pcaps = existsSync(SIPP_PCAPS)
  ? readdirSync(SIPP_PCAPS).filter((name) => name.endsWith('.pcap'))
  : [];

describe.skipIf(pcaps.length === 0)("RTP from SIPp's pcaps", () => {
  it('finds the G.711 A-law and the RFC 4733 captures', () => {
    expect(pcaps).toContain('g711a.pcap');
    expect(pcaps.filter((name) => name.startsWith('dtmf_2833_'))).toHaveLength(12);
  });

  it.each(pcaps)(
    '%s: every packet parses, re-serialises byte for byte, one stream in sequence',
    (name) => {
      const datagrams = readPcapUdp(join(SIPP_PCAPS, name));
      expect(datagrams.length).toBeGreaterThan(0);
      const packets = datagrams.map((d) => parseRtpPacket(d.payload));
      packets.forEach((packet, i) => {
        expect(serializeRtpPacket(packet)).toEqual(datagrams[i]!.payload);
      });
      const expectedType = name === 'g711a.pcap' ? 8 : 101;
      expect(new Set(packets.map((p) => p.payloadType))).toEqual(new Set([expectedType]));
      expect(new Set(packets.map((p) => p.ssrc)).size).toBe(1);
      if (expectedType === 8) {
        // 30 ms of A-law per packet: 240 octets, the timestamp 240 further each time.
        for (const packet of packets) expect(packet.payload.length).toBe(240);
        for (let i = 1; i < packets.length; i++) {
          expect(packets[i]!.sequenceNumber).toBe((packets[i - 1]!.sequenceNumber + 1) & 0xffff);
          expect(packets[i]!.timestamp).toBe((packets[i - 1]!.timestamp + 240) >>> 0);
        }
        return;
      }
      // RFC 4733: one event at one timestamp, four octets each, the first marked; the sequence
      // advances by one except where the capture repeats its end-of-event packet as it is.
      for (const packet of packets) expect(packet.payload.length).toBe(4);
      expect(new Set(packets.map((p) => p.timestamp)).size).toBe(1);
      expect(new Set(packets.map((p) => p.payload[0])).size).toBe(1);
      expect(packets[0]!.marker).toBe(true);
      for (let i = 1; i < packets.length; i++) {
        const step = (packets[i]!.sequenceNumber - packets[i - 1]!.sequenceNumber) & 0xffff;
        const repeatedEnd = (packets[i - 1]!.payload[1]! & 0x80) !== 0;
        if (repeatedEnd) {
          expect(step).toBe(0);
          expect(datagrams[i]!.payload).toEqual(datagrams[i - 1]!.payload);
        } else expect(step).toBe(1);
      }
    },
  );
});
