import type { SdpOrigin } from './session-description.js';
import { SdpParseError } from './sdp-parse-error.js';

const TYPED_LINE = /^([a-z])=(.*)$/;
const ORIGIN = /^(\S+) (\d+) (\d+) IN (IP4|IP6) (\S+)$/;
const MEDIA = /^([a-z-]+) (\d+)(?:\/(\d+))? (\S+)((?: \S+)+)$/i;
const CONNECTION = /^IN (IP4|IP6) (\S+?)(?:\/\d+){0,2}$/;
const RTPMAP = /^rtpmap:(\d+) ([^/\s]+)\/(\d+)(?:\/(\d+))?$/;
const FMTP = /^fmtp:(\d+) \S/;
const PTIME = /^ptime:(\d+(?:\.\d+)?)$/;

function checkMedia(value: string, line: number): boolean {
  const match = MEDIA.exec(value);
  if (match === null) {
    throw new SdpParseError('m= line must be "<media> <port> <proto> <fmt> ..."', line);
  }
  const port = Number(match[2]);
  if (port > 65535) throw new SdpParseError(`m= port ${port} is out of range`, line);
  const isRtp = /(^|\/)RTP(\/|$)/i.test(match[4] ?? '');
  if (isRtp) {
    for (const token of (match[5] ?? '').trim().split(' ')) {
      if (!/^\d+$/.test(token) || Number(token) > 127) {
        throw new SdpParseError(`payload type "${token}" is not a number from 0 to 127`, line);
      }
    }
  }
  return isRtp;
}

function checkAttribute(value: string, line: number): void {
  if (value.startsWith('rtpmap:')) {
    const match = RTPMAP.exec(value);
    if (match === null || Number(match[1]) > 127 || Number(match[3]) === 0) {
      throw new SdpParseError('a=rtpmap must be "<payload type> <encoding>/<clock rate>"', line);
    }
  } else if (value.startsWith('fmtp:') && !FMTP.test(value)) {
    throw new SdpParseError('a=fmtp must be "<format> <parameters>"', line);
  } else if (value.startsWith('ptime:')) {
    const match = PTIME.exec(value);
    if (match === null || Number(match[1]) === 0) {
      throw new SdpParseError('a=ptime must be a positive number of milliseconds', line);
    }
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
 * Checks the lines of an SDP body against RFC 4566 (types, v= first, o=, m=, c= and the
 * attributes voxgate reads) and returns its origin. Accepts CRLF or bare LF line ends.
 */
export function validateSdpLines(text: string): SdpOrigin {
  const lines = text.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) throw new SdpParseError('SDP body is empty');
  if (lines[0] !== 'v=0') throw new SdpParseError('SDP must begin with "v=0"', 1);
  let origin: SdpOrigin | null = null;
  lines.forEach((text, index) => {
    const line = index + 1;
    const match = TYPED_LINE.exec(text);
    if (match === null) throw new SdpParseError(`"${text}" is not a <type>=<value> line`, line);
    const value = match[2] ?? '';
    switch (match[1]) {
      case 'o':
        if (origin !== null) throw new SdpParseError('more than one o= line', line);
        origin = readOrigin(value, line);
        break;
      case 'm':
        if (origin === null) throw new SdpParseError('m= line before the o= line', line);
        checkMedia(value, line);
        break;
      case 'c':
        if (!CONNECTION.test(value)) {
          throw new SdpParseError('c= line must be "IN IP4|IP6 <address>"', line);
        }
        break;
      case 'a':
        checkAttribute(value, line);
        break;
    }
  });
  if (origin === null) throw new SdpParseError('SDP has no o= line');
  return origin;
}
