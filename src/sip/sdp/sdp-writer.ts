import { write } from 'sdp-transform';
import type { MediaDescription } from 'sdp-transform';
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
  /** A safe integer: sdp-transform writes it as a number. */
  readonly sessionVersion: number;
  readonly address: string;
}

export interface OutgoingSession {
  readonly origin: OutgoingOrigin;
  /** The connection address, written once at session level. */
  readonly address: string;
  readonly streams: readonly OutgoingStream[];
}

function ipVersion(address: string): number {
  return address.includes(':') ? 6 : 4;
}

function mediaSection(stream: OutgoingStream): MediaDescription {
  const media: MediaDescription = {
    type: stream.kind,
    port: stream.port,
    protocol: stream.protocol,
    payloads: stream.formats.join(' '),
    rtp: stream.payloads.map((payload) => ({
      payload: payload.payloadType,
      codec: payload.encoding,
      rate: payload.clockRate,
    })),
    fmtp: stream.payloads.flatMap((payload) =>
      payload.fmtp === null ? [] : [{ payload: payload.payloadType, config: payload.fmtp }],
    ),
  };
  if (stream.ptime !== null) media.ptime = stream.ptime;
  if (stream.direction !== null) media.direction = stream.direction;
  return media;
}

/** Writes an SDP body (RFC 4566) with CRLF line ends. */
export function writeSessionDescription(session: OutgoingSession): string {
  const { origin, address } = session;
  return write({
    version: 0,
    origin: {
      username: origin.username,
      sessionId: origin.sessionId,
      sessionVersion: origin.sessionVersion,
      netType: 'IN',
      ipVer: ipVersion(origin.address),
      address: origin.address,
    },
    name: '-',
    connection: { version: ipVersion(address), ip: address },
    timing: { start: 0, stop: 0 },
    media: session.streams.map(mediaSection),
  });
}
