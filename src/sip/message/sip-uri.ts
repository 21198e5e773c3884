import { CodedText } from './coded-text.js';
import { commonParamName } from './common-param-names.js';
import {
  ALPHA,
  DIGIT,
  HEX,
  HNV,
  PARAM,
  PASSWORD,
  URIC,
  USER,
  allOfClass,
  asciiLower,
  classOf,
  hasClass,
} from './grammar.js';
import { digitsPort, readHost } from './host.js';
import { SipParseError } from './sip-parse-error.js';

/** The parts of a SIP or SIPS URI one can build one from (RFC 3261 19.1.1). */
export interface SipUriInit {
  readonly scheme: 'sip' | 'sips';
  /** The user part with %-escapes resolved (an octet string). */
  readonly user?: string | null;
  readonly password?: string | null;
  readonly host: string;
  readonly port?: number | null;
  /** uri-parameters; null for a parameter without a value (`lr`). */
  readonly params?: ReadonlyMap<string, string | null>;
  readonly headers?: ReadonlyMap<string, string>;
}

/**
 * A parsed SIP or SIPS URI. Escapes in the user part, password, parameters and headers are
 * resolved once (RFC 3261 19.1.2; RFC 4475 3.1.1.3: never recursively); `rawUser` keeps the
 * user part as written. The host is lower-cased; parameter names are lower-cased.
 */
export interface SipUri extends SipUriInit {
  readonly user: string | null;
  readonly rawUser: string | null;
  readonly password: string | null;
  readonly port: number | null;
  readonly params: ReadonlyMap<string, string | null>;
  readonly headers: ReadonlyMap<string, string>;
  /** The URI exactly as it was written. */
  readonly raw: string;
}

/** A URI of any other scheme, kept as written (RFC 3261 allows them in most places). */
export interface AbsoluteUri {
  /** Lower-cased. */
  readonly scheme: string;
  readonly raw: string;
}

export function isSipUri(uri: SipUri | AbsoluteUri): uri is SipUri {
  return 'host' in uri;
}

const NO_PARAMS: ReadonlyMap<string, string | null> = new Map();
const NO_HEADERS: ReadonlyMap<string, string> = new Map();

/**
 * Parses a SIP or SIPS URI. A URI of another scheme is an error of kind
 * `unsupported-uri-scheme`; use parseAddressUri to accept every scheme.
 */
export function parseUri(text: string, context = 'URI'): SipUri {
  const uri = parseAddressUri(text, context);
  if (isSipUri(uri)) return uri;
  throw new SipParseError('Unsupported URI scheme', { kind: 'unsupported-uri-scheme' });
}

/** addr-spec = SIP-URI / SIPS-URI / absoluteURI */
export function parseAddressUri(text: string, context = 'URI'): SipUri | AbsoluteUri {
  return readAddressUri(CodedText.of(text), context);
}

/** parseAddressUri, for a URI whose char codes are at hand (one read off the wire). */
export function readAddressUri(uri: CodedText, context = 'URI'): SipUri | AbsoluteUri {
  const sip = sipSchemeLength(uri);
  if (sip === 4) return parseSipUri(uri, 'sip', 4, context);
  if (sip === 5) return parseSipUri(uri, 'sips', 5, context);
  const colon = schemeEnd(uri);
  if (colon === -1) throw malformed(context);
  const text = uri.text;
  const scheme = asciiLower(text.slice(0, colon));
  // absoluteURI = scheme ":" ( hier-part / opaque-part ), both made of uric
  if (!uri.allOfClass(URIC, colon + 1)) throw malformed(context);
  return { scheme, raw: text };
}

/** 4 for "sip:", 5 for "sips:" (in any case), else 0. */
function sipSchemeLength(uri: CodedText): number {
  // c | 0x20 lower-cases an ASCII letter (and leaves -1, past the end, unequal to any).
  if ((uri.at(0) | 0x20) !== 0x73 || (uri.at(1) | 0x20) !== 0x69) return 0;
  if ((uri.at(2) | 0x20) !== 0x70) return 0;
  const c = uri.at(3);
  if (c === 0x3a) return 4;
  return (c | 0x20) === 0x73 && uri.at(4) === 0x3a ? 5 : 0;
}

/** The index of the ":" ending a scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), or -1. */
function schemeEnd(uri: CodedText): number {
  if (!hasClass(uri.at(0), ALPHA)) return -1;
  for (let i = 1; i < uri.length; i++) {
    const c = uri.at(i);
    if (c === 0x3a) return i;
    if (!hasClass(c, ALPHA | DIGIT) && c !== 0x2b && c !== 0x2d && c !== 0x2e) return -1;
  }
  return -1;
}

function parseSipUri(
  uri: CodedText,
  scheme: 'sip' | 'sips',
  from: number,
  context: string,
): SipUri {
  const text = uri.text;
  let user: string | null = null;
  let rawUser: string | null = null;
  let password: string | null = null;
  let pos = from;
  // No '@' may follow the userinfo (host, params and headers cannot hold one).
  const at = text.indexOf('@', from);
  if (at !== -1) {
    const colon = text.indexOf(':', from);
    const userEnd = colon !== -1 && colon < at ? colon : at;
    user = unescape(uri, from, userEnd, USER);
    if (user === null || user.length === 0) throw malformed(context);
    // Without escapes the two are one string.
    rawUser = user.length === userEnd - from ? user : text.slice(from, userEnd);
    if (userEnd !== at) {
      password = unescape(uri, userEnd + 1, at, PASSWORD, true);
      if (password === null) throw malformed(context);
    }
    pos = at + 1;
  }
  const host = readHost(uri, pos);
  if (host === null) throw malformed(context);
  pos += host.length;
  let port: number | null = null;
  if (uri.at(pos) === 0x3a) {
    const portEnd = uri.classEnd(pos + 1, DIGIT);
    port = digitsPort(uri, pos + 1, portEnd);
    if (port === null) throw malformed(context);
    pos = portEnd;
  }
  let params = NO_PARAMS;
  if (uri.at(pos) === 0x3b /* ; */) {
    const read = new Map<string, string | null>();
    pos = readParams(uri, pos, read, context);
    params = read;
  }
  let headers = NO_HEADERS;
  if (uri.at(pos) === 0x3f /* ? */) {
    const read = new Map<string, string>();
    pos = readHeaders(uri, pos + 1, read, context);
    headers = read;
  }
  if (pos !== text.length) throw malformed(context);
  return { scheme, user, rawUser, password, host, port, params, headers, raw: text };
}

/** uri-parameters = *( ";" uri-parameter ); uri-parameter = pname [ "=" pvalue ] */
function readParams(
  uri: CodedText,
  pos: number,
  params: Map<string, string | null>,
  context: string,
): number {
  while (uri.at(pos) === 0x3b /* ; */) {
    // pname and pvalue are made of paramchar, which holds neither "=", ";" nor "?".
    let name = unescapeRun(uri, pos + 1, PARAM);
    if (name === null || name.length === 0) throw malformed(context);
    if (run.upper) {
      name = name.toLowerCase();
    } else if (name.length === run.end - pos - 1) {
      // Written without escapes: the octets are the name.
      name = commonParamName(uri.codes, uri.base + pos + 1, uri.base + run.end) ?? name;
    }
    pos = run.end;
    let value: string | null = null;
    if (uri.at(pos) === 0x3d /* = */) {
      value = unescapeRun(uri, pos + 1, PARAM);
      if (value === null || value.length === 0) throw malformed(context);
      pos = run.end;
    }
    // RFC 3261 19.1.1: a parameter name MUST NOT appear more than once.
    if (params.has(name)) throw malformed(context);
    params.set(name, value);
  }
  return pos;
}

/** Where the last unescapeRun stopped, and whether it met an upper-case letter. */
const run = { end: 0, upper: false };

/**
 * Reads the run of chars of the class (and escapes) from `from`, resolving the escapes; sets
 * `run`. Null when an escape is malformed.
 */
function unescapeRun(uri: CodedText, from: number, flag: number): string | null {
  const { text, codes, base } = uri;
  let out = '';
  let chunk = from;
  let upper = false;
  let i = from;
  for (; i < text.length; i++) {
    const c = codes[base + i]!;
    if (c === 0x25 /* % */) {
      if (!hasClass(uri.at(i + 1), HEX) || !hasClass(uri.at(i + 2), HEX)) return null;
      out += text.slice(chunk, i) + String.fromCharCode(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
      chunk = i + 1;
    } else if ((classOf(c) & flag) !== 0) {
      if (c >= 0x41 && c <= 0x5a) upper = true;
    } else {
      break;
    }
  }
  run.end = i;
  run.upper = upper;
  return chunk === from ? text.slice(from, i) : out + text.slice(chunk, i);
}

/** headers = "?" header *( "&" header ); header = hname "=" hvalue */
function readHeaders(
  uri: CodedText,
  pos: number,
  headers: Map<string, string>,
  context: string,
): number {
  const text = uri.text;
  for (;;) {
    const eq = text.indexOf('=', pos);
    if (eq === -1) throw malformed(context);
    let end = text.indexOf('&', eq);
    if (end === -1) end = text.length;
    const name = unescape(uri, pos, eq, HNV);
    const value = unescape(uri, eq + 1, end, HNV, true);
    if (name === null || name.length === 0 || value === null) throw malformed(context);
    const earlier = headers.get(name);
    headers.set(name, earlier === undefined ? value : `${earlier},${value}`);
    if (end === text.length) return end;
    pos = end + 1;
  }
}

/**
 * The octets of text[from, to) with each escaped = "%" HEX HEX resolved, or null when a char
 * is neither in the class nor a valid escape.
 */
function unescape(
  uri: CodedText,
  from: number,
  to: number,
  flag: number,
  allowEmpty = false,
): string | null {
  if (from === to) return allowEmpty ? '' : null;
  const { text, codes, base } = uri;
  let out = '';
  let chunk = from;
  for (let i = from; i < to; i++) {
    const c = codes[base + i]!;
    if (c === 0x25 /* % */) {
      if (i + 2 >= to) return null;
      if (!hasClass(codes[base + i + 1]!, HEX) || !hasClass(codes[base + i + 2]!, HEX)) {
        return null;
      }
      out += text.slice(chunk, i) + String.fromCharCode(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
      chunk = i + 1;
    } else if ((classOf(c) & flag) === 0) {
      return null;
    }
  }
  return chunk === from ? text.slice(from, to) : out + text.slice(chunk, to);
}

function malformed(context: string): SipParseError {
  return new SipParseError(`Malformed ${context}`);
}

/** Writes a URI: a SIP or SIPS URI from its parts (escaping what must be), others as written. */
export function formatUri(uri: SipUriInit | AbsoluteUri): string {
  if (!('host' in uri)) return uri.raw;
  let out = `${uri.scheme}:`;
  if (uri.user !== null && uri.user !== undefined) {
    out += escape(uri.user, USER);
    if (uri.password !== null && uri.password !== undefined) {
      out += `:${escape(uri.password, PASSWORD)}`;
    }
    out += '@';
  }
  out += uri.host;
  if (uri.port !== null && uri.port !== undefined) out += `:${uri.port}`;
  for (const [name, value] of uri.params ?? NO_PARAMS) {
    out += `;${escape(name, PARAM)}`;
    if (value !== null) out += `=${escape(value, PARAM)}`;
  }
  let separator = '?';
  for (const [name, value] of uri.headers ?? NO_HEADERS) {
    out += `${separator}${escape(name, HNV)}=${escape(value, HNV)}`;
    separator = '&';
  }
  return out;
}

/** %-escapes every octet outside the class (text beyond latin1 as its UTF-8 octets). */
function escape(value: string, flag: number): string {
  if (allOfClass(value, flag)) return value;
  const octets = /[^\x00-\xff]/.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value;
  let out = '';
  for (let i = 0; i < octets.length; i++) {
    const c = octets.charCodeAt(i);
    out += hasClass(c, flag) ? octets[i] : `%${c.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
