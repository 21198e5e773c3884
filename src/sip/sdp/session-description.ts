import { parse as parseSdp } from 'sdp-transform';
import type { MediaDescription } from 'sdp-transform';
import { isMediaDirection, type MediaDirection } from './media-direction.js';
import { SdpParseError } from './sdp-parse-error.js';
import { validateSdpLines } from './sdp-lines.js';

/** One RTP payload format of a media stream: its number, rtpmap and fmtp. */
export interface PayloadFormat {
  readonly payloadType: number;
  /** Encoding name as written (`PCMU`, `telephone-event`); '' when no rtpmap names it. */
  readonly encoding: string;
  /** Clock rate in Hz; 0 when no rtpmap gives one. */
  readonly clockRate: number;
  readonly channels: number;
  readonly fmtp: string | null;
}

/** One m= section, with the session-level defaults (c=, direction) applied. */
export interface MediaStream {
  /** Position among the m= lines, from 0: an answer's streams pair with the offer's by it. */
  readonly index: number;
  /** `audio`, `video`, `image`, ... */
  readonly kind: string;
  /** 0 for a stream that is rejected or disabled (RFC 3264 5.1, 6). */
  readonly port: number;
  readonly protocol: string;
  /** The format tokens of the m= line, in order, as written. */
  readonly formats: readonly string[];
  /** The RTP payload formats in the m= line's order; empty for a non-RTP protocol. */
  readonly payloads: readonly PayloadFormat[];
  /** The connection address (media-level c=, else session-level), null when neither exists. */
  readonly address: string | null;
  /** RTCP port from a=rtcp (RFC 3605), else port + 1. */
  readonly rtcpPort: number;
  readonly ptime: number | null;
  readonly direction: MediaDirection;
}

export interface SdpOrigin {
  readonly username: string;
  /** Kept as text: implementations use 64-bit numbers that a JS number cannot hold. */
  readonly sessionId: string;
  readonly sessionVersion: string;
  readonly address: string;
}

export interface SessionDescription {
  readonly origin: SdpOrigin;
  readonly name: string;
  readonly streams: readonly MediaStream[];
}

/** RFC 3551 table 4: static payload types a peer may use without an rtpmap. */
const STATIC_PAYLOADS: ReadonlyMap<number, readonly [string, number]> = new Map([
  [0, ['PCMU', 8000]],
  [3, ['GSM', 8000]],
  [4, ['G723', 8000]],
  [8, ['PCMA', 8000]],
  [9, ['G722', 8000]],
  [13, ['CN', 8000]],
  [18, ['G729', 8000]],
] as const);

/** True for the RFC 2543 hold address (c=IN IP4 0.0.0.0) and its IPv6 counterpart. */
export function isNullAddress(address: string | null): boolean {
  return address === '0.0.0.0' || address === '::';
}

function isRtpProtocol(protocol: string): boolean {
  return /(^|\/)RTP(\/|$)/i.test(protocol);
}

function readPayloads(media: MediaDescription, formats: readonly string[]): PayloadFormat[] {
  return formats.map((token) => {
    const payloadType = Number(token);
    const rtpmap = media.rtp.find((entry) => entry.payload === payloadType);
    const fmtp = media.fmtp.find((entry) => entry.payload === payloadType);
    const known = STATIC_PAYLOADS.get(payloadType);
    return {
      payloadType,
      encoding: rtpmap?.codec ?? known?.[0] ?? '',
      clockRate: rtpmap?.rate ?? known?.[1] ?? 0,
      channels: rtpmap?.encoding ?? 1,
      fmtp: fmtp?.config ?? null,
    };
  });
}

function readStream(
  media: MediaDescription,
  index: number,
  sessionAddress: string | null,
  sessionDirection: MediaDirection,
): MediaStream {
  // sdp-transform turns a lone format ("0") into a number.
  const written: unknown = media.payloads;
  const formats = written === undefined ? [] : String(written).trim().split(/\s+/);
  const direction = media.direction ?? sessionDirection;
  return {
    index,
    kind: media.type,
    port: media.port,
    protocol: media.protocol,
    formats,
    payloads: isRtpProtocol(media.protocol) ? readPayloads(media, formats) : [],
    address: media.connection?.ip ?? sessionAddress,
    rtcpPort: media.rtcp?.port ?? media.port + 1,
    ptime: media.ptime ?? null,
    direction: isMediaDirection(direction) ? direction : 'sendrecv',
  };
}

/**
 * Reads an SDP body (RFC 4566). Every line is checked first, so that a broken body fails with
 * an SdpParseError naming the line, rather than being read leniently into something else.
 */
export function parseSessionDescription(text: string): SessionDescription {
  const origin = validateSdpLines(text);
  const parsed = parseSdp(text);
  const sessionAddress = parsed.connection?.ip ?? null;
  const sessionDirection = parsed.direction ?? 'sendrecv';
  const streams = parsed.media.map((media, index) =>
    readStream(media, index, sessionAddress, sessionDirection),
  );
  streams.forEach((stream) => {
    // RFC 4566 5.7: a session description MUST contain a c= field in each media description
    // or at the session level.
    if (stream.address === null) {
      throw new SdpParseError(`media stream ${stream.index + 1} has no connection (c=) line`);
    }
  });
  return { origin, name: parsed.name ?? '', streams };
}
