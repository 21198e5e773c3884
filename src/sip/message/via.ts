import { isIP } from 'node:net';
import { DQUOTE, isWsp, parseDigits } from './grammar.js';
import { readGenericParams } from './generic-params.js';
import { checkHost, checkPort, readHost } from './host.js';
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

/** Parses every Via row: via-parm *(COMMA via-parm) each. */
export function parseViaList(rows: string[]): Via[] {
  const out: Via[] = [];
  for (const row of rows) {
    const scanner = new ValueScanner(row, 'Via');
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
export function parseTopVia(rows: string[]): Via {
  const row = rows[0];
  if (row === undefined) throw new SipParseError('Missing Via header', { header: 'Via' });
  const scanner = new ValueScanner(row, 'Via');
  const via = readVia(scanner);
  scanner.skipWs();
  if (!scanner.atEnd && scanner.peek() !== COMMA) scanner.fail();
  return via;
}

/** via-parm = sent-protocol LWS sent-by *( SEMI via-params ) */
function readVia(scanner: ValueScanner): Via {
  scanner.skipWs();
  let protocolName = 'SIP';
  let protocolVersion = '2.0';
  if (scanner.text.startsWith('SIP/2.0/', scanner.pos)) {
    scanner.pos += 8;
  } else {
    protocolName = scanner.token();
    scanner.expect(SLASH);
    protocolVersion = scanner.token();
    scanner.expect(SLASH);
  }
  const transport = upper(scanner.token());
  if (!isWsp(scanner.peek())) scanner.fail();
  scanner.skipWs();
  const host = readHost(scanner.text, scanner.pos);
  if (host === null) scanner.fail();
  scanner.pos += host.length;
  let port: number | null = null;
  if (scanner.consume(COLON)) {
    scanner.skipWs();
    const start = scanner.pos;
    while (scanner.peek() >= 0x30 && scanner.peek() <= 0x39) scanner.pos++;
    port = checkPort(scanner.text.slice(start, scanner.pos));
    if (port === null) scanner.fail();
  }
  const params = readGenericParams(scanner, checkViaParam);
  const branch = params.get('branch') ?? null;
  return { protocolName, protocolVersion, transport, host, port, params, branch };
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
      return value !== null && isIP(value.replace(/^\[(.*)\]$/, '$1')) !== 0;
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
