import { isIPv6 } from 'node:net';
import type { WireRows } from './coded-text.js';
import { DIGIT, DQUOTE, TOKEN, isWsp, parseDigits } from './grammar.js';
import { readGenericParams } from './generic-params.js';
import { checkHost, checkPort, digitsPort, isIPv4, readHost } from './host.js';
import { SipParseError } from './sip-parse-error.js';
import { ValueScanner } from './value-scanner.js';

/** One Via header value (RFC 3261 20.42). */
export interface Via {
  /** "SIP" for every SIP element. */
  readonly protocolName: string;
  readonly protocolVersion: string;
  /** Upper-cased: UDP, TCP, TLS, SCTP, WS, WSS, or an extension. */
  readonly transport: string;
  /** sent-by host, lower-cased; an IPv6 reference keeps its brackets. */
  readonly host: string;
  readonly port: number | null;
  /** branch, received, rport (valueless when asked for, RFC 3581), maddr, ttl, extensions. */
  readonly params: ReadonlyMap<string, string | null>;
  readonly branch: string | null;
}

const SLASH = 0x2f;
const COLON = 0x3a;
const COMMA = 0x2c;

/**
 * Parses every Via row: via-parm *(COMMA via-parm) each. `wire` gives the rows with their
 * octets when they were read off the wire.
 */
export function parseViaList(rows: string[], wire?: WireRows): Via[] {
  const out: Via[] = [];
  for (let r = 0; r < rows.length; r++) {
    const scanner = new ValueScanner(wire?.[r] ?? rows[r]!, 'Via');
    for (;;) {
      out.push(readVia(scanner));
      scanner.skipWs();
      if (scanner.atEnd) break;
      scanner.expect(COMMA);
    }
  }
  return out;
}

/**
 * Parses only the first Via value (the one a transaction is matched on, RFC 3261 17.1.3 and
 * 17.2.3), leaving the others unread.
 */
export function parseTopVia(rows: string[], wire?: WireRows): Via {
  const row = rows[0];
  if (row === undefined) throw new SipParseError('Missing Via header', { header: 'Via' });
  const scanner = new ValueScanner(wire?.[0] ?? row, 'Via');
  const via = readVia(scanner);
  scanner.skipWs();
  if (!scanner.atEnd && scanner.peek() !== COMMA) scanner.fail();
  return via;
}

/** via-parm = sent-protocol LWS sent-by *( SEMI via-params ) */
function readVia(scanner: ValueScanner): Via {
  const text = scanner.text;
  let i = scanner.skipWsp(scanner.pos);
  let protocolName = 'SIP';
  let protocolVersion = '2.0';
  if (isSip20(scanner, i)) {
    i += 8;
  } else {
    // sent-protocol = protocol-name SLASH protocol-version SLASH transport
    const nameEnd = scanner.classEnd(i, TOKEN);
    protocolName = text.slice(i, nameEnd);
    const versionStart = afterSeparator(scanner, nameEnd, SLASH);
    const versionEnd = versionStart === -1 ? -1 : scanner.classEnd(versionStart, TOKEN);
    protocolVersion = text.slice(versionStart, versionEnd);
    i = afterSeparator(scanner, versionEnd, SLASH);
    if (nameEnd === i || versionEnd === versionStart || i === -1) scanner.failAt(versionEnd);
  }
  const transportEnd = scanner.classEnd(i, TOKEN);
  if (transportEnd === i || !isWsp(scanner.at(transportEnd))) scanner.failAt(i);
  const transport = upper(text.slice(i, transportEnd));
  i = scanner.skipWsp(transportEnd);
  const host = readHost(scanner, i);
  if (host === null) scanner.failAt(i);
  i += host.length;
  let port: number | null = null;
  const colon = afterSeparator(scanner, i, COLON);
  if (colon !== -1) {
    i = scanner.classEnd(colon, DIGIT);
    port = digitsPort(scanner, colon, i);
    if (port === null) scanner.failAt(i);
  }
  scanner.pos = i;
  const params = readGenericParams(scanner, checkViaParam);
  const branch = params.get('branch') ?? null;
  return { protocolName, protocolVersion, transport, host, port, params, branch };
}

/** Whether "SIP/2.0/" is at `i`, as nearly every Via writes it. */
function isSip20(scanner: ValueScanner, i: number): boolean {
  const { codes } = scanner;
  const at = scanner.base + i;
  return (
    i + 8 <= scanner.length &&
    codes[at] === 0x53 && // S
    codes[at + 1] === 0x49 && // I
    codes[at + 2] === 0x50 && // P
    codes[at + 3] === SLASH &&
    codes[at + 4] === 0x32 && // 2
    codes[at + 5] === 0x2e && // .
    codes[at + 6] === 0x30 && // 0
    codes[at + 7] === SLASH
  );
}

/**
 * After SWS `code` SWS at `from` (SLASH, COLON), or -1 when `code` is not there (or `from` is
 * -1, from a separator missing before).
 */
function afterSeparator(scanner: ValueScanner, from: number, code: number): number {
  if (from === -1) return -1;
  const at = scanner.skipWsp(from);
  return scanner.at(at) === code ? scanner.skipWsp(at + 1) : -1;
}

/** Transports are compared upper-cased; most are sent so already. */
function upper(token: string): string {
  for (let i = 0; i < token.length; i++) {
    if (token.charCodeAt(i) >= 0x61) return token.toUpperCase();
  }
  return token;
}

/** The via-params RFC 3261 and RFC 3581 give a form to. */
function checkViaParam(name: string, value: string | null): boolean {
  switch (name) {
    case 'branch':
      return value !== null && value.charCodeAt(0) !== DQUOTE;
    case 'received':
      // received = IPv4address / IPv6address (written bare, or as a reference)
      if (value === null) return false;
      return value.charCodeAt(0) === 0x5b
        ? checkHost(value) !== null
        : isIPv4(value) || isIPv6(value);
    case 'rport':
      return value === null || checkPort(value) !== null;
    case 'ttl':
      return value !== null && value.length <= 3 && parseDigits(value, 255) >= 0;
    case 'maddr':
      return value !== null && checkHost(value) !== null;
    default:
      return true;
  }
}
