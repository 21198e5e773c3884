import { readFileSync } from 'node:fs';

/** One RTP packet read from a capture. */
export interface CapturedRtp {
  readonly payloadType: number;
  readonly marker: boolean;
  readonly sequenceNumber: number;
  readonly timestamp: number;
  readonly payload: Uint8Array;
}

const LINKTYPE_ETHERNET = 1;
const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_VLAN = 0x8100;
const IP_PROTOCOL_UDP = 17;

function readRtp(udpPayload: Buffer): CapturedRtp | null {
  if (udpPayload.length < 12 || udpPayload[0]! >> 6 !== 2) return null;
  const csrcCount = udpPayload[0]! & 0x0f;
  let headerLength = 12 + csrcCount * 4;
  if ((udpPayload[0]! & 0x10) !== 0) {
    headerLength += 4 + udpPayload.readUInt16BE(headerLength + 2) * 4;
  }
  let end = udpPayload.length;
  if ((udpPayload[0]! & 0x20) !== 0) end -= udpPayload[end - 1]!;
  return {
    payloadType: udpPayload[1]! & 0x7f,
    marker: (udpPayload[1]! & 0x80) !== 0,
    sequenceNumber: udpPayload.readUInt16BE(2),
    timestamp: udpPayload.readUInt32BE(4),
    payload: new Uint8Array(udpPayload.subarray(headerLength, end)),
  };
}

function readFrame(frame: Buffer): CapturedRtp | null {
  let offset = 12;
  let etherType = frame.readUInt16BE(offset);
  if (etherType === ETHERTYPE_VLAN) {
    offset += 4;
    etherType = frame.readUInt16BE(offset);
  }
  if (etherType !== ETHERTYPE_IPV4) return null;
  const ip = frame.subarray(offset + 2);
  if (ip[9] !== IP_PROTOCOL_UDP) return null;
  const udp = ip.subarray((ip[0]! & 0x0f) * 4);
  return readRtp(udp.subarray(8, udp.readUInt16BE(4)));
}

/** The RTP packets of a libpcap file of Ethernet/IPv4/UDP frames, in capture order. */
export function readPcapRtp(path: string): CapturedRtp[] {
  const file = readFileSync(path);
  const magic = file.readUInt32LE(0);
  const littleEndian = magic === 0xa1b2c3d4 || magic === 0xa1b23c4d;
  if (!littleEndian && file.readUInt32BE(0) !== 0xa1b2c3d4 && file.readUInt32BE(0) !== 0xa1b23c4d) {
    throw new Error(`${path} is not a libpcap file`);
  }
  const u32 = (at: number): number =>
    littleEndian ? file.readUInt32LE(at) : file.readUInt32BE(at);
  if (u32(20) !== LINKTYPE_ETHERNET) throw new Error(`${path} is not an Ethernet capture`);
  const packets: CapturedRtp[] = [];
  for (let offset = 24; offset + 16 <= file.length;) {
    const capturedLength = u32(offset + 8);
    const frame = file.subarray(offset + 16, offset + 16 + capturedLength);
    offset += 16 + capturedLength;
    const rtp = readFrame(frame);
    if (rtp !== null) packets.push(rtp);
  }
  return packets;
}
