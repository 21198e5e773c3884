import { isMediaDirection, type MediaDirection } from './media-direction.js';
import type { SdpOrigin } from './session-description.js';
import { SdpParseError } from './sdp-parse-error.js';
import {
  emptyTransportLines,
  readTransportAttribute,
  type TransportLines,
} from './transport-lines.js';

const TYPED_LINE = /^([a-z])=(.*)$/;
const ORIGIN = /^(\S+) (\d+) (\d+) IN (IP4|IP6) (\S+)$/;
const MEDIA = /^([a-z-]+) (\d+)(?:\/(\d+))? (\S+)((?: \S+)+)$/i;
const CONNECTION = /^IN (IP4|IP6) (\S+?)(?:\/\d+){0,2}$/;
const RTPMAP = /^rtpmap:(\d+) ([^/\s]+)\/(\d+)(?:\/(\d+))?$/;
const FMTP = /^fmtp:(\d+) \S/;
const PTIME = /^ptime:(\d+(?:\.\d+)?)$/;
const RTCP = /^rtcp:(\d+)(?: |$)/;

/** An rtpmap attribute (RFC 4566 6). */
export interface RtpMap {
  readonly encoding: string;
  readonly clockRate: number;
  readonly channels: number;
}

/** One m= section as written, before session-level defaults are applied. */
export interface SdpMediaLines {
  readonly kind: string;
  readonly port: number;
  readonly protocol: string;
  readonly isRtp: boolean;
  readonly formats: readonly string[];
  /** The media-level c= address, null when the section has none. */
  address: string | null;
  /** The first rtpmap and fmtp of each payload type. */
  readonly rtpmaps: Map<number, RtpMap>;
  readonly fmtps: Map<number, string>;
  /** From a=rtcp (RFC 3605). */
  rtcpPort: number | null;
  ptime: number | null;
  direction: MediaDirection | null;
  /** a=crypto values (RFC 4568), as written: each is read when an answer is chosen. */
  readonly crypto: { value: string; line: number }[];
  /** ICE, DTLS, mid and rtcp-mux attributes of the section. */
  readonly transport: TransportLines;
}

/** An SDP body's lines, checked and read in one pass. */
export interface SdpLines {
  readonly origin: SdpOrigin;
  readonly name: string;
  /** The session-level c= address and direction attribute, null when absent. */
  readonly address: string | null;
  readonly direction: MediaDirection | null;
  /** Session-level transport attributes (a=group, a=ice-lite, ICE and DTLS defaults). */
  readonly transport: TransportLines;
  readonly media: readonly SdpMediaLines[];
}

function readMedia(value: string, line: number): SdpMediaLines {
  const match = MEDIA.exec(value);
  if (match === null) {
    throw new SdpParseError('m= line must be "<media> <port> <proto> <fmt> ..."', line);
  }
  const port = Number(match[2]);
  if (port > 65535) throw new SdpParseError(`m= port ${port} is out of range`, line);
  const protocol = match[4] ?? '';
  const isRtp = /(^|\/)RTP(\/|$)/i.test(protocol);
  const formats = (match[5] ?? '').trim().split(/\s+/);
  if (isRtp) {
    for (const token of formats) {
      if (!/^\d+$/.test(token) || Number(token) > 127) {
        throw new SdpParseError(`payload type "${token}" is not a number from 0 to 127`, line);
      }
    }
  }
  return {
    kind: match[1] ?? '',
    port,
    protocol,
    isRtp,
    formats,
    address: null,
    rtpmaps: new Map(),
    fmtps: new Map(),
    rtcpPort: null,
    ptime: null,
    direction: null,
    crypto: [],
    transport: emptyTransportLines(),
  };
}

/** Checks an a= line and, inside an m= section, keeps what voxgate reads of it. */
function readAttribute(value: string, line: number, media: SdpMediaLines | null): void {
  if (value.startsWith('rtpmap:')) {
    const match = RTPMAP.exec(value);
    if (match === null || Number(match[1]) > 127 || Number(match[3]) === 0) {
      throw new SdpParseError('a=rtpmap must be "<payload type> <encoding>/<clock rate>"', line);
    }
    const payloadType = Number(match[1]);
    if (media !== null && !media.rtpmaps.has(payloadType)) {
      media.rtpmaps.set(payloadType, {
        encoding: match[2] ?? '',
        clockRate: Number(match[3]),
        channels: match[4] === undefined ? 1 : Number(match[4]),
      });
    }
  } else if (value.startsWith('fmtp:')) {
    if (!FMTP.test(value)) throw new SdpParseError('a=fmtp must be "<format> <parameters>"', line);
    const space = value.indexOf(' ');
    const payloadType = Number(value.slice('fmtp:'.length, space));
    if (media !== null && !media.fmtps.has(payloadType)) {
      media.fmtps.set(payloadType, value.slice(space + 1));
    }
  } else if (value.startsWith('ptime:')) {
    const match = PTIME.exec(value);
    if (match === null || Number(match[1]) === 0) {
      throw new SdpParseError('a=ptime must be a positive number of milliseconds', line);
    }
    if (media !== null) media.ptime = Number(match[1]);
  } else if (value.startsWith('crypto:')) {
    media?.crypto.push({ value, line });
  } else if (value.startsWith('rtcp:')) {
    const match = RTCP.exec(value);
    if (media !== null && match !== null) media.rtcpPort = Number(match[1]);
  }
}

function readOrigin(value: string, line: number): SdpOrigin {
  const match = ORIGIN.exec(value);
  if (match === null) {
    throw new SdpParseError(
      'o= line must be "<username> <sess-id> <sess-version> IN IP4|IP6 <address>"',
      line,
    );
  }
  return {
    username: match[1] ?? '',
    sessionId: match[2] ?? '',
    sessionVersion: match[3] ?? '',
    address: match[5] ?? '',
  };
}

/**
 * Reads the lines of an SDP body, checking each against RFC 4566 (types, v= first, o=, m=, c=
 * and the attributes voxgate reads) so that a broken body fails with an SdpParseError naming
 * the line rather than being read leniently into something else. Accepts CRLF or bare LF.
 */
export function readSdpLines(text: string): SdpLines {
  const lines = text.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) throw new SdpParseError('SDP body is empty');
  if (lines[0] !== 'v=0') throw new SdpParseError('SDP must begin with "v=0"', 1);
  let origin: SdpOrigin | null = null;
  let name = '';
  let address: string | null = null;
  let direction: MediaDirection | null = null;
  const transport = emptyTransportLines();
  const media: SdpMediaLines[] = [];
  let current: SdpMediaLines | null = null;
  for (let index = 1; index < lines.length; index++) {
    const text = lines[index]!;
    const line = index + 1;
    const match = TYPED_LINE.exec(text);
    if (match === null) throw new SdpParseError(`"${text}" is not a <type>=<value> line`, line);
    const value = match[2] ?? '';
    switch (match[1]) {
      case 'o':
        if (origin !== null) throw new SdpParseError('more than one o= line', line);
        origin = readOrigin(value, line);
        break;
      case 's':
        if (current === null) name = value;
        break;
      case 'm':
        if (origin === null) throw new SdpParseError('m= line before the o= line', line);
        current = readMedia(value, line);
        media.push(current);
        break;
      case 'c': {
        const connection = CONNECTION.exec(value);
        if (connection === null) {
          throw new SdpParseError('c= line must be "IN IP4|IP6 <address>"', line);
        }
        if (current === null) address = connection[2] ?? null;
        else current.address = connection[2] ?? null;
        break;
      }
      case 'a': {
        // Read as most stacks do: a direction attribute with trailing blanks is still one.
        const flag = value.trimEnd();
        if (isMediaDirection(flag)) {
          if (current === null) direction = flag;
          else current.direction = flag;
        } else if (!readTransportAttribute(value, line, current?.transport ?? transport)) {
          readAttribute(value, line, current);
        }
        break;
      }
    }
  }
  if (origin === null) throw new SdpParseError('SDP has no o= line');
  return { origin, name, address, direction, transport, media };
}
