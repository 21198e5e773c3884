import type { MediaDirection } from './media-direction.js';
import type { PayloadFormat } from './session-description.js';

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
}

function ipVersion(address: string): string {
  return address.includes(':') ? 'IP6' : 'IP4';
}

function writeStream(stream: OutgoingStream, lines: string[]): void {
  lines.push(`m=${stream.kind} ${stream.port} ${stream.protocol} ${stream.formats.join(' ')}`);
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
 * Writes an SDP body (RFC 4566) with CRLF line ends: v=, o=, s=, one session-level c=, t=, then
 * each stream's m= line with its rtpmap, fmtp, ptime and direction attributes, in that order.
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
  for (const stream of session.streams) writeStream(stream, lines);
  lines.push('');
  return lines.join('\r\n');
}
