/**
 * RTP packets (RFC 3550 5.1), parsed without copying: the payload, CSRC list and extension data
 * are views into the datagram.
 *
 *     0                   1                   2                   3
 *     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *    |V=2|P|X|  CC   |M|     PT      |       sequence number         |
 *    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *    |                           timestamp                           |
 *    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *    |           synchronization source (SSRC) identifier            |
 *    +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 *    |            contributing source (CSRC) identifiers             |
 *    |                             ....                              |
 *    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *    |      defined by profile       |           length              |   (X = 1, 5.3.1)
 *    |                        header extension                       |
 *    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 */

export const RTP_VERSION = 2;
export const RTP_HEADER_LENGTH = 12;

export interface RtpHeaderExtension {
  /** The 16 bits "defined by profile". */
  profile: number;
  /** The extension's data, a whole number of 32-bit words. */
  data: Uint8Array;
}

export interface RtpPacket {
  marker: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  csrcs: number[];
  extension?: RtpHeaderExtension;
  payload: Uint8Array;
  /** Padding octets after the payload, the last of which counts them (RFC 3550 5.1, P bit). */
  paddingLength: number;
}

export type RtpParseErrorReason =
  'too-short' | 'bad-version' | 'csrc-past-end' | 'extension-past-end' | 'bad-padding';

export class RtpParseError extends Error {
  constructor(
    readonly reason: RtpParseErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'RtpParseError';
  }
}

/** Reads the first two bits of a datagram: RTP and RTCP both carry version 2 there. */
export const looksLikeRtpVersion2 = (data: Uint8Array): boolean =>
  data.length > 0 && data[0]! >> 6 === RTP_VERSION;

export function parseRtpPacket(data: Uint8Array): RtpPacket {
  if (data.length < RTP_HEADER_LENGTH)
    throw new RtpParseError(
      'too-short',
      `RTP packet of ${data.length} bytes is shorter than the 12-byte header`,
    );
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const first = data[0]!;
  const version = first >> 6;
  if (version !== RTP_VERSION)
    throw new RtpParseError('bad-version', `expected RTP version 2 but received ${version}`);
  const padded = (first & 0x20) !== 0;
  const extended = (first & 0x10) !== 0;
  const csrcCount = first & 0x0f;
  const second = data[1]!;

  let offset = RTP_HEADER_LENGTH;
  if (offset + csrcCount * 4 > data.length)
    throw new RtpParseError(
      'csrc-past-end',
      `${csrcCount} CSRC identifiers run past the end of a ${data.length}-byte packet`,
    );
  const csrcs: number[] = [];
  for (let i = 0; i < csrcCount; i++, offset += 4) csrcs.push(view.getUint32(offset));

  let extension: RtpHeaderExtension | undefined;
  if (extended) {
    if (offset + 4 > data.length)
      throw new RtpParseError('extension-past-end', 'the header extension runs past the end');
    const profile = view.getUint16(offset);
    const words = view.getUint16(offset + 2);
    const end = offset + 4 + words * 4;
    if (end > data.length)
      throw new RtpParseError(
        'extension-past-end',
        `a header extension of ${words} words runs past the end of a ${data.length}-byte packet`,
      );
    extension = { profile, data: data.subarray(offset + 4, end) };
    offset = end;
  }

  let paddingLength = 0;
  if (padded) {
    paddingLength = data[data.length - 1]!;
    // RFC 3550 5.1: the last octet of the padding counts how many octets to ignore, itself included.
    if (paddingLength === 0 || offset + paddingLength > data.length)
      throw new RtpParseError(
        'bad-padding',
        `a padding count of ${paddingLength} does not fit a ${data.length - offset}-byte body`,
      );
  }

  return {
    marker: (second & 0x80) !== 0,
    payloadType: second & 0x7f,
    sequenceNumber: view.getUint16(2),
    timestamp: view.getUint32(4),
    ssrc: view.getUint32(8),
    csrcs,
    ...(extension ? { extension } : {}),
    payload: data.subarray(offset, data.length - paddingLength),
    paddingLength,
  };
}

export interface RtpPacketFields {
  marker?: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  csrcs?: readonly number[];
  extension?: RtpHeaderExtension;
  payload: Uint8Array;
  paddingLength?: number;
}

export function serializeRtpPacket(packet: RtpPacketFields): Buffer {
  const csrcs = packet.csrcs ?? [];
  const extension = packet.extension;
  const padding = packet.paddingLength ?? 0;
  checkFields(packet, csrcs.length, padding);
  const extensionLength = extension ? 4 + extension.data.length : 0;
  const length =
    RTP_HEADER_LENGTH + csrcs.length * 4 + extensionLength + packet.payload.length + padding;
  // From Node's pool (a packet is sent and dropped): every byte is written below.
  const out = Buffer.allocUnsafe(length);
  out[0] = (RTP_VERSION << 6) | (padding > 0 ? 0x20 : 0) | (extension ? 0x10 : 0) | csrcs.length;
  out[1] = (packet.marker ? 0x80 : 0) | packet.payloadType;
  out.writeUInt16BE(packet.sequenceNumber, 2);
  out.writeUInt32BE(packet.timestamp >>> 0, 4);
  out.writeUInt32BE(packet.ssrc >>> 0, 8);
  let offset = RTP_HEADER_LENGTH;
  for (const csrc of csrcs) {
    out.writeUInt32BE(csrc >>> 0, offset);
    offset += 4;
  }
  if (extension) {
    out.writeUInt16BE(extension.profile, offset);
    out.writeUInt16BE(extension.data.length / 4, offset + 2);
    out.set(extension.data, offset + 4);
    offset += extensionLength;
  }
  out.set(packet.payload, offset);
  if (padding > 0) {
    out.fill(0, offset + packet.payload.length, length - 1);
    out[length - 1] = padding;
  }
  return out;
}

function checkFields(packet: RtpPacketFields, csrcCount: number, padding: number): void {
  if (!isInteger(packet.payloadType, 0, 127))
    throw new RangeError(
      `Expected an integer between 0 and 127 for payloadType but received ${packet.payloadType}`,
    );
  if (!isInteger(packet.sequenceNumber, 0, 0xffff))
    throw new RangeError(
      `Expected an integer between 0 and 65535 for sequenceNumber but received ${packet.sequenceNumber}`,
    );
  if (csrcCount > 15)
    throw new RangeError(`Expected at most 15 CSRC identifiers but received ${csrcCount}`);
  if (!isInteger(padding, 0, 255))
    throw new RangeError(
      `Expected an integer between 0 and 255 for paddingLength but received ${padding}`,
    );
  const ext = packet.extension;
  if (ext && (ext.data.length % 4 !== 0 || ext.data.length / 4 > 0xffff))
    throw new RangeError(
      `Expected header extension data in whole 32-bit words but received ${ext.data.length} bytes`,
    );
}

const isInteger = (value: number, min: number, max: number): boolean =>
  Number.isInteger(value) && value >= min && value <= max;
