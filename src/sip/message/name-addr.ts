import type { CodedText, WireRows } from './coded-text.js';
import { DQUOTE, TOKEN, hasClass, isWsp, trimWsp } from './grammar.js';
import { readGenericParams } from './generic-params.js';
import { octetsFromText, textFromOctets } from './octets.js';
import { SipParseError } from './sip-parse-error.js';
import {
  type AbsoluteUri,
  type SipUri,
  type SipUriInit,
  formatUri,
  readAddressUri,
} from './sip-uri.js';
import { ValueScanner } from './value-scanner.js';

/**
 * An address in From, To, Contact, Route, Record-Route (RFC 3261 20.10, 20.20, 20.39...):
 *   ( name-addr / addr-spec ) *( SEMI param )
 */
export interface NameAddr {
  /** Unquoted with quoted-pairs resolved, as text (UTF-8 decoded); null when there is none. */
  readonly displayName: string | null;
  readonly uri: SipUri | AbsoluteUri;
  /** Header parameters (not URI parameters): names lower-cased, values as written. */
  readonly params: ReadonlyMap<string, string | null>;
  /** The tag parameter, when there is one. */
  readonly tag: string | null;
}

export interface NameAddrInit {
  readonly displayName?: string | null;
  readonly uri: SipUriInit | AbsoluteUri;
  readonly params?: ReadonlyMap<string, string | null>;
  readonly tag?: string | null;
}

const LAQUOT = 0x3c;
const COMMA = 0x2c;

/** Reads one address at the scanner; `allowAddrSpec` is false where only name-addr is legal. */
function readNameAddr(scanner: ValueScanner, allowAddrSpec: boolean): NameAddr {
  scanner.skipWs();
  const displayName = readDisplayName(scanner);
  let uriStart: number;
  let uriEnd: number;
  if (scanner.peek() === LAQUOT) {
    // LAQUOT = SWS "<" and RAQUOT = ">" SWS: no whitespace inside the brackets.
    uriStart = scanner.pos + 1;
    uriEnd = scanner.text.indexOf('>', uriStart);
    if (uriEnd === -1) scanner.fail();
    scanner.pos = uriEnd + 1;
  } else {
    if (!allowAddrSpec) scanner.fail();
    uriStart = scanner.pos;
    scanner.untilDelimiter();
    uriEnd = scanner.pos;
    // RFC 3261 20.10: a URI holding a comma, question mark or semicolon MUST be in brackets.
    const question = scanner.text.indexOf('?', uriStart);
    if (question !== -1 && question < uriEnd) scanner.fail();
  }
  const uri = parseUriIn(scanner, uriStart, uriEnd);
  const params = readGenericParams(scanner, checkTag);
  return { displayName, uri, params, tag: params.get('tag') ?? null };
}

/**
 * display-name = *(token LWS) / quoted-string. Tokens are a display name only when a "<"
 * follows them (RFC 4475 3.1.1.6: none need separate them from it).
 */
function readDisplayName(scanner: ValueScanner): string | null {
  if (scanner.peek() === DQUOTE) {
    const name = scanner.quoted();
    scanner.skipWs();
    if (scanner.peek() !== LAQUOT) scanner.fail();
    return scanner.quotedAscii ? name : textFromOctets(name);
  }
  if (scanner.peek() === LAQUOT) return null;
  const { text, codes, base } = scanner;
  for (let i = scanner.pos; i < text.length; i++) {
    const c = codes[base + i]!;
    if (c === LAQUOT) {
      const name = trimWsp(text, scanner.pos, i);
      scanner.pos = i;
      return textFromOctets(name);
    }
    if (!hasClass(c, TOKEN) && !isWsp(c)) return null;
  }
  return null;
}

/** The URI from `from` to `to` in the scanner's text. */
function parseUriIn(scanner: ValueScanner, from: number, to: number): SipUri | AbsoluteUri {
  try {
    return readAddressUri(scanner.part(from, to));
  } catch (error) {
    if (error instanceof SipParseError) scanner.fail();
    throw error;
  }
}

/** tag-param = "tag" EQUAL token */
function checkTag(name: string, value: string | null, isToken: boolean): boolean {
  return name !== 'tag' || (value !== null && isToken);
}

/** Parses a single address (From, To, Refer-To...). */
export function parseNameAddr(text: string, header: string): NameAddr {
  return readSingleNameAddr(text, header);
}

/** parseNameAddr, for a value whose char codes may be at hand. */
export function readSingleNameAddr(text: string | CodedText, header: string): NameAddr {
  const scanner = new ValueScanner(text, header);
  const address = readNameAddr(scanner, true);
  scanner.skipWs();
  if (!scanner.atEnd) scanner.fail();
  return address;
}

/**
 * Parses the rows of a list of addresses (Contact, Route, Record-Route...). `wire` gives the
 * rows with their octets when they were read off the wire.
 */
export function parseNameAddrList(
  rows: string[],
  header: string,
  allowAddrSpec: boolean,
  wire?: WireRows,
): NameAddr[] {
  const out: NameAddr[] = [];
  for (let r = 0; r < rows.length; r++) {
    const scanner = new ValueScanner(wire?.[r] ?? rows[r]!, header);
    for (;;) {
      out.push(readNameAddr(scanner, allowAddrSpec));
      scanner.skipWs();
      if (scanner.atEnd) break;
      scanner.expect(COMMA);
    }
  }
  return out;
}

/** Writes an address in name-addr form (always bracketed, so URI parameters stay its own). */
export function formatNameAddr(address: NameAddrInit): string {
  let out = '';
  if (address.displayName) out += `${quote(octetsFromText(address.displayName))} `;
  out += `<${formatUri(address.uri)}>`;
  const params = address.params ?? new Map<string, string | null>();
  for (const [name, value] of params) out += value === null ? `;${name}` : `;${name}=${value}`;
  if (address.tag && !params.has('tag')) out += `;tag=${address.tag}`;
  return out;
}

function quote(octets: string): string {
  if (/[\r\n]/.test(octets)) throw new TypeError('Expected a display name without CR or LF');
  return `"${octets.replace(/["\\]/g, '\\$&')}"`;
}
