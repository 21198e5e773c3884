import type { ReceptionReport } from './receive-statistics.js';
import type { NtpTimestamp } from './ntp-time.js';

/**
 * RTCP (RFC 3550 6.4-6.6): SR, RR, SDES and BYE, sent and received as compound packets.
 *
 *     0                   1                   2                   3
 *     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *    |V=2|P|    RC   |   PT=SR=200   |             length            |
 *    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *    |                         SSRC of sender                        |
 *    +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 *    |              NTP timestamp, most significant word             |   (SR only)
 *    |             NTP timestamp, least significant word             |
 *    |                         RTP timestamp                         |
 *    |                     sender's packet count                     |
 *    |                      sender's octet count                     |
 *    +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 *    |                 SSRC_1 (SSRC of first source)                 |   report block,
 *    | fraction lost |       cumulative number of packets lost       |   24 bytes,
 *    |           extended highest sequence number received           |   RC of them
 *    |                      interarrival jitter                      |
 *    |                         last SR (LSR)                         |
 *    |                   delay since last SR (DLSR)                  |
 *    +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 */

export const RTCP_SR = 200;
export const RTCP_RR = 201;
export const RTCP_SDES = 202;
export const RTCP_BYE = 203;
const SDES_CNAME = 1;
const REPORT_BLOCK_LENGTH = 24;

export interface SenderReport {
  type: 'sr';
  ssrc: number;
  ntp: NtpTimestamp;
  rtpTimestamp: number;
  packetCount: number;
  octetCount: number;
  reports: ReceptionReport[];
}

export interface ReceiverReport {
  type: 'rr';
  ssrc: number;
  reports: ReceptionReport[];
}

export interface SdesItem {
  type: number;
  text: string;
}

export interface SourceDescription {
  type: 'sdes';
  chunks: { ssrc: number; items: SdesItem[] }[];
}

export interface Goodbye {
  type: 'bye';
  ssrcs: number[];
  reason?: string;
}

export interface UnknownRtcp {
  type: 'unknown';
  packetType: number;
  body: Uint8Array;
}

export type RtcpPacket = SenderReport | ReceiverReport | SourceDescription | Goodbye | UnknownRtcp;

export class RtcpParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RtcpParseError';
  }
}

export const cnameChunk = (ssrc: number, cname: string): SourceDescription['chunks'][number] => ({
  ssrc,
  items: [{ type: SDES_CNAME, text: cname }],
});

/** The CNAME a description gives for `ssrc`, if any. */
export const cnameOf = (sdes: SourceDescription, ssrc: number): string | undefined =>
  sdes.chunks.find((c) => c.ssrc === ssrc)?.items.find((i) => i.type === SDES_CNAME)?.text;

/** Splits a compound RTCP packet (RFC 3550 6.1) into its parts. */
export function parseRtcpCompound(data: Uint8Array): RtcpPacket[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const packets: RtcpPacket[] = [];
  let offset = 0;
  if (data.length < 4) throw new RtcpParseError(`RTCP packet of ${data.length} bytes is too short`);
  while (offset < data.length) {
    if (offset + 4 > data.length)
      throw new RtcpParseError(`${data.length - offset} trailing bytes after the last RTCP packet`);
    const first = data[offset]!;
    if (first >> 6 !== 2)
      throw new RtcpParseError(`expected RTCP version 2 but received ${first >> 6}`);
    const count = first & 0x1f;
    const packetType = data[offset + 1]!;
    const length = (view.getUint16(offset + 2) + 1) * 4;
    const end = offset + length;
    if (end > data.length)
      throw new RtcpParseError(
        `an RTCP packet of ${length} bytes runs past the end of a ${data.length}-byte datagram`,
      );
    let bodyEnd = end;
    if (first & 0x20) {
      // RFC 3550 6.4.1: padding's last octet counts the padding, itself included.
      const padding = data[end - 1]!;
      if (padding === 0 || padding > length - 4)
        throw new RtcpParseError(`a padding count of ${padding} does not fit the packet`);
      bodyEnd -= padding;
    }
    packets.push(parseOne(view, packetType, count, offset + 4, bodyEnd));
    offset = end;
  }
  return packets;
}

function parseOne(
  view: DataView,
  packetType: number,
  count: number,
  start: number,
  end: number,
): RtcpPacket {
  const need = (bytes: number, what: string): void => {
    if (start + bytes > end) throw new RtcpParseError(`${what} runs past the end of its packet`);
  };
  switch (packetType) {
    case RTCP_SR: {
      need(24 + count * REPORT_BLOCK_LENGTH, 'a sender report');
      return {
        type: 'sr',
        ssrc: view.getUint32(start),
        ntp: { seconds: view.getUint32(start + 4), fraction: view.getUint32(start + 8) },
        rtpTimestamp: view.getUint32(start + 12),
        packetCount: view.getUint32(start + 16),
        octetCount: view.getUint32(start + 20),
        reports: parseReportBlocks(view, start + 24, count),
      };
    }
    case RTCP_RR:
      need(4 + count * REPORT_BLOCK_LENGTH, 'a receiver report');
      return {
        type: 'rr',
        ssrc: view.getUint32(start),
        reports: parseReportBlocks(view, start + 4, count),
      };
    case RTCP_SDES:
      return parseSdes(view, count, start, end);
    case RTCP_BYE: {
      need(count * 4, 'a BYE');
      const ssrcs = Array.from({ length: count }, (_, i) => view.getUint32(start + i * 4));
      const reasonAt = start + count * 4;
      if (reasonAt < end) {
        const reasonLength = view.getUint8(reasonAt);
        if (reasonAt + 1 + reasonLength > end)
          throw new RtcpParseError('a BYE reason runs past the end of its packet');
        return { type: 'bye', ssrcs, reason: text(view, reasonAt + 1, reasonLength) };
      }
      return { type: 'bye', ssrcs };
    }
    default:
      return {
        type: 'unknown',
        packetType,
        body: new Uint8Array(view.buffer, view.byteOffset + start, end - start),
      };
  }
}

function parseReportBlocks(view: DataView, at: number, count: number): ReceptionReport[] {
  const reports: ReceptionReport[] = [];
  for (let i = 0; i < count; i++, at += REPORT_BLOCK_LENGTH) {
    const lossWord = view.getUint32(at + 4);
    // Cumulative lost is 24-bit signed: shift it to the top and back to extend the sign.
    const cumulativeLost = ((lossWord & 0xffffff) << 8) >> 8;
    reports.push({
      ssrc: view.getUint32(at),
      fractionLost: lossWord >>> 24,
      cumulativeLost,
      extendedHighestSequence: view.getUint32(at + 8),
      jitter: view.getUint32(at + 12),
      lastSenderReport: view.getUint32(at + 16),
      delaySinceLastSenderReport: view.getUint32(at + 20),
    });
  }
  return reports;
}

function parseSdes(view: DataView, count: number, start: number, end: number): SourceDescription {
  const chunks: SourceDescription['chunks'] = [];
  let at = start;
  for (let c = 0; c < count; c++) {
    if (at + 4 > end) throw new RtcpParseError('an SDES chunk runs past the end of its packet');
    const ssrc = view.getUint32(at);
    at += 4;
    const items: SdesItem[] = [];
    for (;;) {
      if (at >= end) throw new RtcpParseError('an SDES chunk has no terminating null item');
      const type = view.getUint8(at);
      if (type === 0) break;
      if (at + 2 > end) throw new RtcpParseError('an SDES item runs past the end of its packet');
      const length = view.getUint8(at + 1);
      if (at + 2 + length > end)
        throw new RtcpParseError('an SDES item runs past the end of its packet');
      items.push({ type, text: text(view, at + 2, length) });
      at += 2 + length;
    }
    // RFC 3550 6.5: the null item(s) pad each chunk to a 32-bit boundary.
    at = start + Math.ceil((at + 1 - start) / 4) * 4;
    chunks.push({ ssrc, items });
  }
  return { type: 'sdes', chunks };
}

const text = (view: DataView, at: number, length: number): string =>
  Buffer.from(view.buffer, view.byteOffset + at, length).toString('utf8');

/** Joins RTCP packets into one compound datagram. */
export function serializeRtcpCompound(packets: readonly RtcpPacket[]): Buffer {
  return Buffer.concat(packets.map(serializeRtcpPacket));
}

export function serializeRtcpPacket(packet: RtcpPacket): Buffer {
  switch (packet.type) {
    case 'sr': {
      const body = Buffer.alloc(24 + packet.reports.length * REPORT_BLOCK_LENGTH);
      body.writeUInt32BE(packet.ssrc >>> 0, 0);
      body.writeUInt32BE(packet.ntp.seconds >>> 0, 4);
      body.writeUInt32BE(packet.ntp.fraction >>> 0, 8);
      body.writeUInt32BE(packet.rtpTimestamp >>> 0, 12);
      body.writeUInt32BE(packet.packetCount >>> 0, 16);
      body.writeUInt32BE(packet.octetCount >>> 0, 20);
      writeReportBlocks(body, 24, packet.reports);
      return withHeader(RTCP_SR, packet.reports.length, body);
    }
    case 'rr': {
      const body = Buffer.alloc(4 + packet.reports.length * REPORT_BLOCK_LENGTH);
      body.writeUInt32BE(packet.ssrc >>> 0, 0);
      writeReportBlocks(body, 4, packet.reports);
      return withHeader(RTCP_RR, packet.reports.length, body);
    }
    case 'sdes':
      return withHeader(RTCP_SDES, packet.chunks.length, sdesBody(packet));
    case 'bye': {
      const reason = packet.reason === undefined ? undefined : Buffer.from(packet.reason, 'utf8');
      const length = packet.ssrcs.length * 4 + (reason ? 1 + reason.length : 0);
      const body = Buffer.alloc(Math.ceil(length / 4) * 4);
      packet.ssrcs.forEach((ssrc, i) => body.writeUInt32BE(ssrc >>> 0, i * 4));
      if (reason) {
        body[packet.ssrcs.length * 4] = reason.length;
        reason.copy(body, packet.ssrcs.length * 4 + 1);
      }
      return withHeader(RTCP_BYE, packet.ssrcs.length, body);
    }
    case 'unknown':
      return withHeader(packet.packetType, 0, Buffer.from(packet.body));
  }
}

function sdesBody(packet: SourceDescription): Buffer {
  const parts: Buffer[] = [];
  for (const chunk of packet.chunks) {
    const items = chunk.items.map((item) => {
      const value = Buffer.from(item.text, 'utf8');
      if (value.length > 255)
        throw new RangeError(
          `Expected an SDES item of at most 255 bytes but received ${value.length}`,
        );
      return Buffer.concat([Buffer.from([item.type, value.length]), value]);
    });
    const length = 4 + items.reduce((sum, item) => sum + item.length, 0) + 1;
    const out = Buffer.alloc(Math.ceil(length / 4) * 4);
    out.writeUInt32BE(chunk.ssrc >>> 0, 0);
    Buffer.concat(items).copy(out, 4);
    parts.push(out);
  }
  return Buffer.concat(parts);
}

function writeReportBlocks(out: Buffer, at: number, reports: readonly ReceptionReport[]): void {
  for (const report of reports) {
    out.writeUInt32BE(report.ssrc >>> 0, at);
    out.writeUInt32BE(
      (((report.fractionLost & 0xff) << 24) | (report.cumulativeLost & 0xffffff)) >>> 0,
      at + 4,
    );
    out.writeUInt32BE(report.extendedHighestSequence >>> 0, at + 8);
    out.writeUInt32BE(report.jitter >>> 0, at + 12);
    out.writeUInt32BE(report.lastSenderReport >>> 0, at + 16);
    out.writeUInt32BE(report.delaySinceLastSenderReport >>> 0, at + 20);
    at += REPORT_BLOCK_LENGTH;
  }
}

function withHeader(packetType: number, count: number, body: Buffer): Buffer {
  if (count > 31)
    throw new RangeError(`Expected at most 31 report blocks or chunks but received ${count}`);
  const header = Buffer.alloc(4);
  header[0] = (2 << 6) | count;
  header[1] = packetType;
  header.writeUInt16BE(body.length / 4, 2);
  return Buffer.concat([header, body]);
}
