import { DQUOTE, TOKEN68, asciiLower, hasClass, isWsp } from './grammar.js';
import { ValueScanner } from './value-scanner.js';

/**
 * A challenge (WWW-Authenticate, Proxy-Authenticate) or credentials (Authorization,
 * Proxy-Authorization), RFC 3261 25.1 and RFC 8898:
 *
 *   auth-scheme LWS auth-param *(COMMA auth-param)   or   "Bearer" LWS token68
 */
export interface AuthValue {
  /** As written; schemes compare case-insensitively. */
  readonly scheme: string;
  /** Names lower-cased; quoted values unquoted with quoted-pairs resolved. */
  readonly params: ReadonlyMap<string, string>;
  /** The token68 form (a bearer token), when the value is one. */
  readonly token68: string | null;
}

const COMMA = 0x2c;
const EQUAL = 0x3d;

/**
 * Parses the rows of one of the four headers. Each row is one value: RFC 3261 7.3.1 forbids
 * combining them, so commas here only separate parameters.
 */
export function parseAuthValues(rows: string[], header: string): AuthValue[] {
  return rows.map((row) => parseAuthValue(row, header));
}

function parseAuthValue(row: string, header: string): AuthValue {
  const scanner = new ValueScanner(row, header);
  scanner.skipWs();
  const scheme = scanner.token();
  const params = new Map<string, string>();
  // RFC 3261 25.1: Digest carries at least one parameter; other schemes may carry a token68,
  // or nothing.
  const digest = asciiLower(scheme) === 'digest';
  if (scanner.atEnd && !digest) return { scheme, params, token68: null };
  if (!isWsp(scanner.peek())) scanner.fail();
  scanner.skipWs();
  const token68 = digest ? null : readToken68(scanner);
  if (token68 !== null) return { scheme, params, token68 };
  for (;;) {
    const name = asciiLower(scanner.token());
    scanner.expect(EQUAL);
    const value = scanner.peek() === DQUOTE ? scanner.quoted() : scanner.token();
    if (params.has(name)) scanner.fail();
    params.set(name, value);
    scanner.skipWs();
    if (scanner.atEnd) break;
    scanner.expect(COMMA);
  }
  return { scheme, params, token68: null };
}

/** token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=", alone to the end. */
function readToken68(scanner: ValueScanner): string | null {
  const text = scanner.text;
  const start = scanner.pos;
  let i = start;
  while (i < text.length && hasClass(text.charCodeAt(i), TOKEN68)) i++;
  if (i === start) return null;
  while (i < text.length && text.charCodeAt(i) === EQUAL) i++;
  const end = i;
  while (i < text.length && isWsp(text.charCodeAt(i))) i++;
  // Anything after it ("realm=x", "a=b, c=d") makes these auth-params instead.
  if (i !== text.length) return null;
  scanner.pos = i;
  return text.slice(start, end);
}
