import { readFileSync } from 'node:fs';
import { RtpParseError, parseRtpPacket, type RtpPacket } from '../../src/media/rtp/rtp-packet.js';

/** One UDP datagram out of a capture. */
export interface CapturedDatagram {
  /** Capture time in microseconds. */
  atMicros: number;
  source: string;
  destination: string;
  sourcePort: number;
  destinationPort: number;
  payload: Buffer;
}

const LINKTYPE_ETHERNET = 1;
const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_VLAN = 0x8100;
const IP_PROTOCOL_UDP = 17;

/**
 * Reads the UDP over IPv4 over Ethernet datagrams of a libpcap file (either byte order,
 * microsecond or nanosecond timestamps); skips everything else.
 */
export function readPcapUdp(path: string): CapturedDatagram[] {
  const file = readFileSync(path);
  const magic = file.readUInt32LE(0);
  const littleEndian = magic === 0xa1b2c3d4 || magic === 0xa1b23c4d;
  if (!littleEndian && file.readUInt32BE(0) !== 0xa1b2c3d4 && file.readUInt32BE(0) !== 0xa1b23c4d)
    throw new Error(`${path} is not a libpcap file`);
  const nanos = (littleEndian ? magic : file.readUInt32BE(0)) === 0xa1b23c4d;
  const u32 = (at: number): number =>
    littleEndian ? file.readUInt32LE(at) : file.readUInt32BE(at);
  if (u32(20) !== LINKTYPE_ETHERNET) throw new Error(`${path} is not an Ethernet capture`);
  const datagrams: CapturedDatagram[] = [];
  for (let at = 24; at + 16 <= file.length;) {
    const seconds = u32(at);
    const fraction = u32(at + 4);
    const captured = u32(at + 8);
    const frame = file.subarray(at + 16, at + 16 + captured);
    at += 16 + captured;
    const datagram = udpIn(frame);
    if (datagram)
      datagrams.push({
        atMicros: seconds * 1e6 + (nanos ? fraction / 1000 : fraction),
        ...datagram,
      });
  }
  return datagrams;
}

function udpIn(frame: Buffer): Omit<CapturedDatagram, 'atMicros'> | undefined {
  let offset = 12;
  let etherType = frame.readUInt16BE(offset);
  if (etherType === ETHERTYPE_VLAN) {
    offset += 4;
    etherType = frame.readUInt16BE(offset);
  }
  if (etherType !== ETHERTYPE_IPV4) return undefined;
  const ip = offset + 2;
  const headerLength = (frame[ip]! & 0x0f) * 4;
  if (frame[ip + 9] !== IP_PROTOCOL_UDP) return undefined;
  const totalLength = frame.readUInt16BE(ip + 2);
  const udp = ip + headerLength;
  const udpLength = frame.readUInt16BE(udp + 4);
  const end = Math.min(udp + udpLength, ip + totalLength, frame.length);
  return {
    source: [...frame.subarray(ip + 12, ip + 16)].join('.'),
    destination: [...frame.subarray(ip + 16, ip + 20)].join('.'),
    sourcePort: frame.readUInt16BE(udp),
    destinationPort: frame.readUInt16BE(udp + 2),
    payload: frame.subarray(udp + 8, end),
  };
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
