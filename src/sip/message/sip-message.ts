import { type AuthValue, parseAuthValues } from './auth-value.js';
import type { WireRows } from './coded-text.js';
import { type ContentType, parseContentType } from './content-type.js';
import { type NameAddr, parseNameAddrList, readSingleNameAddr } from './name-addr.js';
import {
  type CSeq,
  parseCSeq,
  parseCallId,
  parseContentLength,
  parseExpires,
  parseMaxForwards,
  parseOptionTags,
  requiredRow,
} from './scalar-headers.js';
import { parseDate } from './sip-date.js';
import { SipHeaders } from './sip-headers.js';
import { SipParseError } from './sip-parse-error.js';
import { type Via, parseTopVia, parseViaList } from './via.js';

export const SIP_VERSION = 'SIP/2.0';

const EMPTY_BODY = Buffer.alloc(0);

export interface SipMessageInit {
  headers?: SipHeaders | Iterable<readonly [string, string]>;
  /** Octets; a string is taken as UTF-8 text. */
  body?: Buffer | string;
}

/**
 * What requests and responses share: headers, a body, and typed access to the headers.
 *
 * Each typed accessor parses its header on first use and keeps the result until the headers
 * change; a malformed value throws a SipParseError naming the header. The objects returned
 * are shared between calls: treat them as read-only.
 */
export abstract class SipMessage {
  headers: SipHeaders;
  body: Buffer;
  readonly version = SIP_VERSION;

  constructor(init: SipMessageInit) {
    const { headers, body } = init;
    this.headers = headers instanceof SipHeaders ? headers : new SipHeaders(headers);
    this.body = typeof body === 'string' ? Buffer.from(body, 'utf8') : (body ?? EMPTY_BODY);
  }

  abstract get isRequest(): boolean;

  /** The request method, or the CSeq method a response answers (null when unreadable). */
  protected abstract contextMethod(): string | null;

  /** The start line, without its CRLF. */
  abstract startLine(): string;

  /** Every Via value, top first. */
  via(): Via[] {
    return this.#typed(Slot.Via, 'via', parseViaList);
  }

  /** The first Via value, read without the others (what transactions match on). */
  topVia(): Via {
    return this.#typed(Slot.TopVia, 'via', parseTopVia);
  }

  from(): NameAddr {
    return this.#typed(Slot.From, 'from', parseFrom);
  }

  to(): NameAddr {
    return this.#typed(Slot.To, 'to', parseTo);
  }

  callId(): string {
    return this.#typed(Slot.CallId, 'call-id', parseCallId);
  }

  cseq(): CSeq {
    return this.#typed(Slot.CSeq, 'cseq', parseCSeq);
  }

  /** Every Contact address, or '*' (RFC 3261 10.2.2: the wildcard of a REGISTER). */
  contact(): NameAddr[] | '*' {
    return this.#typed(Slot.Contact, 'contact', parseContact);
  }

  route(): NameAddr[] {
    return this.#typed(Slot.Route, 'route', parseRoute);
  }

  recordRoute(): NameAddr[] {
    return this.#typed(Slot.RecordRoute, 'record-route', parseRecordRoute);
  }

  maxForwards(): number | null {
    return this.#typed(Slot.MaxForwards, 'max-forwards', parseMaxForwards);
  }

  expires(): number | null {
    return this.#typed(Slot.Expires, 'expires', parseExpires);
  }

  /** The Content-Length header's value (the body's length is `body.length`). */
  contentLength(): number | null {
    return this.#typed(Slot.ContentLength, 'content-length', parseContentLength);
  }

  contentType(): ContentType | null {
    return this.#typed(Slot.ContentType, 'content-type', parseContentType);
  }

  /** The Date header in milliseconds since the epoch. */
  date(): number | null {
    return this.#typed(Slot.Date, 'date', parseDate);
  }

  authorization(): AuthValue[] {
    return this.#typed(Slot.Authorization, 'authorization', parseAuthorization);
  }

  proxyAuthorization(): AuthValue[] {
    return this.#typed(Slot.ProxyAuthorization, 'proxy-authorization', parseProxyAuthorization);
  }

  wwwAuthenticate(): AuthValue[] {
    return this.#typed(Slot.WwwAuthenticate, 'www-authenticate', parseWwwAuthenticate);
  }

  proxyAuthenticate(): AuthValue[] {
    return this.#typed(Slot.ProxyAuthenticate, 'proxy-authenticate', parseProxyAuthenticate);
  }

  requires(): string[] {
    return this.#typed(Slot.Require, 'require', parseRequire);
  }

  proxyRequire(): string[] {
    return this.#typed(Slot.ProxyRequire, 'proxy-require', parseProxyRequire);
  }

  supported(): string[] {
    return this.#typed(Slot.Supported, 'supported', parseSupported);
  }

  unsupported(): string[] {
    return this.#typed(Slot.Unsupported, 'unsupported', parseUnsupported);
  }

  /**
   * The message as octets: the start line, every header row (canonical names), a
   * Content-Length that is the body's length, the empty line and the body.
   */
  toBuffer(): Buffer {
    const head = `${this.startLine()}\r\n${this.headers.format(this.body.length)}\r\n`;
    const out = Buffer.allocUnsafe(head.length + this.body.length);
    out.write(head, 0, 'latin1');
    this.body.copy(out, head.length);
    return out;
  }

  /** The message as text, for logs and tests (the body read as UTF-8). */
  toString(): string {
    return this.toBuffer().toString('utf8');
  }

  #typed<T>(slot: Slot, key: string, parse: (rows: string[], wire?: WireRows) => T): T {
    try {
      return this.headers.cached(slot, key, parse);
    } catch (error) {
      if (error instanceof SipParseError) {
        throw error.inMessage(this.isRequest, this.isRequest ? this.contextMethod() : null);
      }
      throw error;
    }
  }
}

/** Where each typed header is kept in the headers' cache. */
const enum Slot {
  Via,
  TopVia,
  From,
  To,
  CallId,
  CSeq,
  Contact,
  Route,
  RecordRoute,
  MaxForwards,
  Expires,
  ContentLength,
  ContentType,
  Date,
  Authorization,
  ProxyAuthorization,
  WwwAuthenticate,
  ProxyAuthenticate,
  Require,
  ProxyRequire,
  Supported,
  Unsupported,
}

const parseFrom = (rows: string[], wire?: WireRows): NameAddr =>
  parseSingleAddress(rows, wire, 'From');
const parseTo = (rows: string[], wire?: WireRows): NameAddr => parseSingleAddress(rows, wire, 'To');
const parseRoute = (rows: string[], wire?: WireRows): NameAddr[] =>
  parseNameAddrList(rows, 'Route', false, wire);
const parseRecordRoute = (rows: string[], wire?: WireRows): NameAddr[] =>
  parseNameAddrList(rows, 'Record-Route', false, wire);
const parseAuthorization = (rows: string[]): AuthValue[] => parseAuthValues(rows, 'Authorization');
const parseProxyAuthorization = (rows: string[]): AuthValue[] =>
  parseAuthValues(rows, 'Proxy-Authorization');
const parseWwwAuthenticate = (rows: string[]): AuthValue[] =>
  parseAuthValues(rows, 'WWW-Authenticate');
const parseProxyAuthenticate = (rows: string[]): AuthValue[] =>
  parseAuthValues(rows, 'Proxy-Authenticate');
const parseRequire = (rows: string[]): string[] => parseOptionTags(rows, 'Require', false);
const parseProxyRequire = (rows: string[]): string[] =>
  parseOptionTags(rows, 'Proxy-Require', false);
const parseSupported = (rows: string[]): string[] => parseOptionTags(rows, 'Supported', true);
const parseUnsupported = (rows: string[]): string[] => parseOptionTags(rows, 'Unsupported', false);

function parseSingleAddress(rows: string[], wire: WireRows | undefined, header: string): NameAddr {
  const row = requiredRow(rows, header);
  return readSingleNameAddr(wire?.[0] ?? row, header);
}

function parseContact(rows: string[], wire?: WireRows): NameAddr[] | '*' {
  if (rows.length === 1 && rows[0] === '*') return '*';
  if (rows.includes('*'))
    throw new SipParseError('Malformed Contact header', { header: 'Contact' });
  return parseNameAddrList(rows, 'Contact', true, wire);
}
