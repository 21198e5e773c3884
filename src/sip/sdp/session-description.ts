import type { MediaDirection } from './media-direction.js';
import { SdpParseError } from './sdp-parse-error.js';
import { readSdpLines, type SdpLines, type SdpMediaLines } from './sdp-lines.js';
import type { SdpCandidate } from './ice-candidate.js';
import type { DtlsFingerprint, DtlsSetup } from './transport-lines.js';

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

/**
 * The WebRTC transport of a stream (RFC 8839 ICE, RFC 8842 DTLS, RFC 8843 BUNDLE, RFC 5761
 * rtcp-mux), with session-level values applied where the section has none.
 */
export interface StreamTransport {
  readonly mid: string | null;
  readonly rtcpMux: boolean;
  /** The peer's ICE ufrag and pwd; null when the stream has no ICE. */
  readonly ice: { readonly ufrag: string; readonly pwd: string } | null;
  readonly iceOptions: readonly string[];
  /** The peer is an ICE-lite agent (a=ice-lite). */
  readonly iceLite: boolean;
  readonly candidates: readonly SdpCandidate[];
  readonly endOfCandidates: boolean;
  readonly fingerprints: readonly DtlsFingerprint[];
  readonly setup: DtlsSetup | null;
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
  /** The section's a=crypto values (RFC 4568) with their line numbers, in order. */
  readonly crypto?: readonly { readonly value: string; readonly line: number }[];
  /** Present when the section or the session carries any WebRTC transport attribute. */
  readonly transport?: StreamTransport;
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
  /** The mids of the first a=group:BUNDLE (RFC 8843), null when there is none. */
  readonly bundle: readonly string[] | null;
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

function readPayloads(media: SdpMediaLines): PayloadFormat[] {
  return media.formats.map((token) => {
    const payloadType = Number(token);
    const rtpmap = media.rtpmaps.get(payloadType);
    const known = STATIC_PAYLOADS.get(payloadType);
    return {
      payloadType,
      encoding: rtpmap?.encoding ?? known?.[0] ?? '',
      clockRate: rtpmap?.clockRate ?? known?.[1] ?? 0,
      channels: rtpmap?.channels ?? 1,
      fmtp: media.fmtps.get(payloadType) ?? null,
    };
  });
}

function streamTransport(
  lines: SdpLines,
  media: SdpMediaLines,
  index: number,
): StreamTransport | undefined {
  const session = lines.transport;
  const own = media.transport;
  if (!own.seen && !session.seen) return undefined;
  const ufrag = own.iceUfrag ?? session.iceUfrag;
  const pwd = own.icePwd ?? session.icePwd;
  // RFC 8839 5.4: ice-ufrag and ice-pwd come together.
  if ((ufrag === null) !== (pwd === null)) {
    throw new SdpParseError(`media stream ${index + 1} has only one of a=ice-ufrag and a=ice-pwd`);
  }
  return {
    mid: own.mid,
    rtcpMux: own.rtcpMux,
    ice: ufrag === null || pwd === null ? null : { ufrag, pwd },
    iceOptions: own.iceOptions.length > 0 ? own.iceOptions : session.iceOptions,
    iceLite: session.iceLite || own.iceLite,
    candidates: own.candidates,
    endOfCandidates: own.endOfCandidates || session.endOfCandidates,
    fingerprints: own.fingerprints.length > 0 ? own.fingerprints : session.fingerprints,
    setup: own.setup ?? session.setup,
  };
}

/**
 * Reads an SDP body (RFC 4566). Every line is checked, so that a broken body fails with an
 * SdpParseError naming the line, rather than being read leniently into something else.
 */
export function parseSessionDescription(text: string): SessionDescription {
  const lines = readSdpLines(text);
  const streams = lines.media.map((media, index): MediaStream => {
    const address = media.address ?? lines.address;
    // RFC 4566 5.7: a session description MUST contain a c= field in each media description
    // or at the session level.
    if (address === null) {
      throw new SdpParseError(`media stream ${index + 1} has no connection (c=) line`);
    }
    const transport = streamTransport(lines, media, index);
    return {
      index,
      kind: media.kind,
      port: media.port,
      protocol: media.protocol,
      formats: media.formats,
      payloads: media.isRtp ? readPayloads(media) : [],
      address,
      rtcpPort: media.rtcpPort ?? media.port + 1,
      ptime: media.ptime,
      direction: media.direction ?? lines.direction ?? 'sendrecv',
      ...(media.crypto.length > 0 && { crypto: media.crypto }),
      ...(transport === undefined ? {} : { transport }),
    };
  });
  const bundle = lines.transport.groups.find((group) => group.semantics === 'BUNDLE');
  return { origin: lines.origin, name: lines.name, streams, bundle: bundle?.mids ?? null };
}
