import { ALPHA, DIGIT, hasClass, isToken } from './grammar.js';
import type { SipParseErrorKind } from './sip-parse-error.js';

/** A start line as read; `error` says why it is not one (the other fields are best effort). */
export interface StartLine {
  /** True for a Request-Line; false for a Status-Line. */
  isRequest: boolean;
  method: string | null;
  uri: string | null;
  status: number | null;
  /** The reason phrase octets. */
  reason: string | null;
  error: string | null;
  errorKind: SipParseErrorKind;
}

const VERSION = /^SIP\/\d+\.\d+$/i;

/**
 *   Request-Line = Method SP Request-URI SP SIP-Version CRLF
 *   Status-Line  = SIP-Version SP Status-Code SP Reason-Phrase CRLF
 *
 * Checked exactly: single SP separators, no other whitespace (RFC 4475 3.1.2.7-3.1.2.9).
 */
export function parseStartLine(line: string): StartLine {
  // A method is a token, which cannot hold "/": a line starting "SIP/" is a Status-Line.
  if ((line.charCodeAt(0) | 0x20) === 0x73 && (line.charCodeAt(1) | 0x20) === 0x69) {
    if ((line.charCodeAt(2) | 0x20) === 0x70 && line.charCodeAt(3) === 0x2f) {
      return parseStatusLine(line);
    }
  }
  return parseRequestLine(line);
}

function parseRequestLine(line: string): StartLine {
  const sp1 = line.indexOf(' ');
  const method = sp1 > 0 ? line.slice(0, sp1) : line;
  const result: StartLine = {
    isRequest: true,
    method: isToken(method) ? method : null,
    uri: null,
    status: null,
    reason: null,
    error: null,
    errorKind: 'malformed',
  };
  const sp2 = lastSpace(line);
  if (result.method === null || sp1 <= 0 || sp2 === sp1) return failed(result, 'Request-Line');
  const versionError = checkVersion(line.slice(sp2 + 1), result);
  if (versionError !== null) return failed(result, 'Request-Line', versionError);
  const uri = line.slice(sp1 + 1, sp2);
  if (uri.charCodeAt(0) === 0x20 || uri.charCodeAt(uri.length - 1) === 0x20) {
    return failed(result, 'Request-Line');
  }
  // Request-URI = SIP-URI / SIPS-URI / absoluteURI: it starts with a scheme and ":" and
  // holds no whitespace (RFC 4475 3.1.2.6, 3.1.2.7). The rest is checked by requestUri().
  if (!isUriText(uri)) return failed(result, 'Request-URI');
  result.uri = uri;
  return result;
}

function parseStatusLine(line: string): StartLine {
  const result: StartLine = {
    isRequest: false,
    method: null,
    uri: null,
    status: null,
    reason: null,
    error: null,
    errorKind: 'malformed',
  };
  const sp1 = line.indexOf(' ');
  if (sp1 === -1) return failed(result, 'Status-Line');
  const versionError = checkVersion(line.slice(0, sp1), result);
  if (versionError !== null) return failed(result, 'Status-Line', versionError);
  // Status-Code = 3DIGIT, 100 to 699 (RFC 3261 7.2: 1xx to 6xx), then SP.
  let status = 0;
  for (let i = sp1 + 1; i < sp1 + 4; i++) {
    const d = line.charCodeAt(i) - 0x30;
    if (!(d >= 0 && d <= 9)) return failed(result, 'Status-Line', 'Bad status code');
    status = status * 10 + d;
  }
  if (status < 100 || status > 699) return failed(result, 'Status-Line', 'Bad status code');
  if (line.length === sp1 + 4 || line.charCodeAt(sp1 + 4) !== 0x20) {
    return failed(result, 'Status-Line', 'Bad status code');
  }
  const reason = line.slice(sp1 + 5);
  // Reason-Phrase = *(reserved / unreserved / escaped / UTF8-NONASCII / UTF8-CONT / SP / HTAB)
  for (let i = 0; i < reason.length; i++) {
    const c = reason.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return failed(result, 'Status-Line');
  }
  result.status = status;
  result.reason = reason;
  return result;
}

/** null when the version is SIP/2.0, else the reason; sets the 505 kind for other versions. */
function checkVersion(version: string, result: StartLine): string | null {
  // RFC 3261 7.1: the SIP-Version string is case-insensitive.
  if (version === 'SIP/2.0' || (version.length === 7 && version.toUpperCase() === 'SIP/2.0')) {
    return null;
  }
  if (!VERSION.test(version)) return 'Malformed';
  result.errorKind = 'version-not-supported';
  return 'SIP version not supported';
}

/**
 * line.lastIndexOf(' '): the version ends the line, so a loop back from the end finds it in a
 * few steps, where lastIndexOf costs a call into the runtime.
 */
function lastSpace(line: string): number {
  let i = line.length - 1;
  while (i >= 0 && line.charCodeAt(i) !== 0x20) i--;
  return i;
}

function isUriText(uri: string): boolean {
  if (!hasClass(uri.charCodeAt(0), ALPHA)) return false;
  for (let i = 1; i < uri.length; i++) {
    const c = uri.charCodeAt(i);
    if (c === 0x3a) return uri.indexOf(' ') === -1 && uri.indexOf('\t') === -1;
    if (!hasClass(c, ALPHA | DIGIT) && c !== 0x2b && c !== 0x2d && c !== 0x2e) return false;
  }
  return false;
}

function failed(result: StartLine, what: string, reason = 'Malformed'): StartLine {
  result.error = reason === 'Malformed' ? `Malformed ${what}` : reason;
  return result;
}
