import { formatCandidate, type SdpCandidate } from './ice-candidate.js';
import type { MediaDirection } from './media-direction.js';
import type { OutgoingCrypto } from './sdes-crypto.js';
import { cryptoLines } from './sdes-negotiation.js';
import type { PayloadFormat } from './session-description.js';
import type { DtlsFingerprint, DtlsSetup } from './transport-lines.js';

/** What voxgate writes for its side of a WebRTC stream: ICE, DTLS and rtcp-mux. */
export interface OutgoingTransport {
  readonly ice: { readonly ufrag: string; readonly pwd: string };
  readonly fingerprint: DtlsFingerprint;
  readonly setup: DtlsSetup;
  readonly candidates: readonly SdpCandidate[];
}

/** A stream as voxgate writes it: an offered or accepted one, or a rejected one (port 0). */
export interface OutgoingStream {
  readonly kind: string;
  readonly port: number;
  readonly protocol: string;
  readonly formats: readonly string[];
  /** rtpmap and fmtp lines to write; empty for a rejected stream. */
  readonly payloads: readonly PayloadFormat[];
  readonly ptime: number | null;
  readonly direction: MediaDirection | null;
  /** a=mid (RFC 8843), kept on rejected streams too so the answer pairs with the offer. */
  readonly mid?: string | null;
  readonly transport?: OutgoingTransport;
  /** SDES-SRTP keys (RFC 4568): every offered line, or the one answered. */
  readonly crypto?: readonly OutgoingCrypto[];
}

export interface OutgoingOrigin {
  readonly username: string;
  readonly sessionId: string;
  readonly sessionVersion: number;
  readonly address: string;
}

export interface OutgoingSession {
  readonly origin: OutgoingOrigin;
  /** The connection address, written once at session level. */
  readonly address: string;
  readonly streams: readonly OutgoingStream[];
  /** The mids of a=group:BUNDLE; none written when null or absent. */
  readonly bundle?: readonly string[] | null;
  /** Writes a=ice-lite (RFC 8839 5.3): voxgate answers checks but sends none. */
  readonly iceLite?: boolean;
}

function ipVersion(address: string): string {
  return address.includes(':') ? 'IP6' : 'IP4';
}

function writeTransport(transport: OutgoingTransport, lines: string[]): void {
  lines.push(`a=ice-ufrag:${transport.ice.ufrag}`, `a=ice-pwd:${transport.ice.pwd}`);
  lines.push(`a=fingerprint:${transport.fingerprint.algorithm} ${transport.fingerprint.value}`);
  lines.push(`a=setup:${transport.setup}`, 'a=rtcp-mux');
  for (const candidate of transport.candidates) lines.push(`a=${formatCandidate(candidate)}`);
  // RFC 8840 4.2: all our candidates are in this body; nothing will trickle after it.
  lines.push('a=end-of-candidates');
}

function writeStream(stream: OutgoingStream, lines: string[]): void {
  lines.push(`m=${stream.kind} ${stream.port} ${stream.protocol} ${stream.formats.join(' ')}`);
  if (stream.mid !== undefined && stream.mid !== null) lines.push(`a=mid:${stream.mid}`);
  if (stream.transport !== undefined) writeTransport(stream.transport, lines);
  lines.push(...cryptoLines(stream.crypto));
  for (const payload of stream.payloads) {
    const channels = payload.channels > 1 ? `/${payload.channels}` : '';
    lines.push(
      `a=rtpmap:${payload.payloadType} ${payload.encoding}/${payload.clockRate}${channels}`,
    );
  }
  for (const payload of stream.payloads) {
    if (payload.fmtp !== null) lines.push(`a=fmtp:${payload.payloadType} ${payload.fmtp}`);
  }
  if (stream.ptime !== null) lines.push(`a=ptime:${stream.ptime}`);
  if (stream.direction !== null) lines.push(`a=${stream.direction}`);
}

/**
 * Writes an SDP body (RFC 4566) with CRLF line ends: v=, o=, s=, one session-level c=, t=, the
 * BUNDLE group and ice-lite when given, then each stream's m= line with its mid, its ICE, DTLS
 * and rtcp-mux attributes when it has them, rtpmap, fmtp, ptime and direction, in that order.
 */
export function writeSessionDescription(session: OutgoingSession): string {
  const { origin, address } = session;
  const lines = [
    'v=0',
    `o=${origin.username} ${origin.sessionId} ${origin.sessionVersion} IN ${ipVersion(origin.address)} ${origin.address}`,
    's=-',
    `c=IN ${ipVersion(address)} ${address}`,
    't=0 0',
  ];
  if (session.bundle) lines.push(`a=group:BUNDLE ${session.bundle.join(' ')}`);
  if (session.iceLite) lines.push('a=ice-lite');
  for (const stream of session.streams) writeStream(stream, lines);
  lines.push('');
  return lines.join('\r\n');
}
