import { readFileSync } from 'node:fs';
import { RtpParseError, parseRtpPacket, type RtpPacket } from '../../src/media/rtp/rtp-packet.js';

/** One UDP datagram or TCP segment out of a capture. */
export interface CapturedPacket {
  protocol: 'udp' | 'tcp';
  /** Capture time in microseconds. */
  atMicros: number;
  source: string;
  destination: string;
  sourcePort: number;
  destinationPort: number;
  payload: Buffer;
}

/** One UDP datagram out of a capture. */
export type CapturedDatagram = CapturedPacket & { protocol: 'udp' };

const LINKTYPE_ETHERNET = 1;
const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_VLAN = 0x8100;
const IP_PROTOCOL_TCP = 6;
const IP_PROTOCOL_UDP = 17;

/** The UDP over IPv4 over Ethernet datagrams of a libpcap file; everything else is skipped. */
export function readPcapUdp(path: string): CapturedDatagram[] {
  return readPcapPackets(path).filter((p): p is CapturedDatagram => p.protocol === 'udp');
}

/**
 * Reads the UDP datagrams and TCP segments over IPv4 over Ethernet of a libpcap file (either
 * byte order, microsecond or nanosecond timestamps; a loopback capture on Linux is Ethernet);
 * skips everything else, and a last record cut short by a capture still being written.
 */
export function readPcapPackets(path: string): CapturedPacket[] {
  const file = readFileSync(path);
  const magic = file.readUInt32LE(0);
  const littleEndian = magic === 0xa1b2c3d4 || magic === 0xa1b23c4d;
  if (!littleEndian && file.readUInt32BE(0) !== 0xa1b2c3d4 && file.readUInt32BE(0) !== 0xa1b23c4d)
    throw new Error(`${path} is not a libpcap file`);
  const nanos = (littleEndian ? magic : file.readUInt32BE(0)) === 0xa1b23c4d;
  const u32 = (at: number): number =>
    littleEndian ? file.readUInt32LE(at) : file.readUInt32BE(at);
  if (u32(20) !== LINKTYPE_ETHERNET) throw new Error(`${path} is not an Ethernet capture`);
  const packets: CapturedPacket[] = [];
  for (let at = 24; at + 16 <= file.length;) {
    const seconds = u32(at);
    const fraction = u32(at + 4);
    const captured = u32(at + 8);
    if (at + 16 + captured > file.length) break;
    const frame = file.subarray(at + 16, at + 16 + captured);
    at += 16 + captured;
    const packet = ipPayloadIn(frame);
    if (packet)
      packets.push({
        atMicros: seconds * 1e6 + (nanos ? fraction / 1000 : fraction),
        ...packet,
      });
  }
  return packets;
}

function ipPayloadIn(frame: Buffer): Omit<CapturedPacket, 'atMicros'> | undefined {
  let offset = 12;
  let etherType = frame.readUInt16BE(offset);
  if (etherType === ETHERTYPE_VLAN) {
    offset += 4;
    etherType = frame.readUInt16BE(offset);
  }
  if (etherType !== ETHERTYPE_IPV4) return undefined;
  const ip = offset + 2;
  const headerLength = (frame[ip]! & 0x0f) * 4;
  const protocol = frame[ip + 9];
  if (protocol !== IP_PROTOCOL_UDP && protocol !== IP_PROTOCOL_TCP) return undefined;
  const ipEnd = Math.min(ip + frame.readUInt16BE(ip + 2), frame.length);
  const transport = ip + headerLength;
  const addresses = {
    source: [...frame.subarray(ip + 12, ip + 16)].join('.'),
    destination: [...frame.subarray(ip + 16, ip + 20)].join('.'),
    sourcePort: frame.readUInt16BE(transport),
    destinationPort: frame.readUInt16BE(transport + 2),
  };
  if (protocol === IP_PROTOCOL_TCP) {
    const dataOffset = (frame[transport + 12]! >> 4) * 4;
    return {
      protocol: 'tcp',
      ...addresses,
      payload: frame.subarray(transport + dataOffset, ipEnd),
    };
  }
  const end = Math.min(transport + frame.readUInt16BE(transport + 4), ipEnd);
  return { protocol: 'udp', ...addresses, payload: frame.subarray(transport + 8, end) };
}

/** The RTP packets of a capture's UDP datagrams, in capture order (others skipped). */
export function readPcapRtp(path: string): RtpPacket[] {
  const packets: RtpPacket[] = [];
  for (const { payload } of readPcapUdp(path)) {
    try {
      packets.push(parseRtpPacket(payload));
    } catch (error) {
      if (!(error instanceof RtpParseError)) throw error;
    }
  }
  return packets;
}
