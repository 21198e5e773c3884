import { DQUOTE, asciiLower } from './grammar.js';
import { singleRow } from './scalar-headers.js';
import { ValueScanner } from './value-scanner.js';

/** Content-Type = media-type (RFC 3261 20.15) */
export interface ContentType {
  /** Lower-cased. */
  readonly type: string;
  /** Lower-cased. */
  readonly subtype: string;
  /** Names lower-cased; quoted values unquoted (a MIME parameter means the same either way). */
  readonly params: ReadonlyMap<string, string>;
}

const SLASH = 0x2f;
const SEMI = 0x3b;
const EQUAL = 0x3d;

/** media-type = m-type SLASH m-subtype *(SEMI m-parameter); null when absent. */
export function parseContentType(rows: string[]): ContentType | null {
  const row = singleRow(rows, 'Content-Type');
  if (row === null) return null;
  const scanner = new ValueScanner(row, 'Content-Type');
  const type = asciiLower(scanner.token());
  scanner.expect(SLASH);
  const subtype = asciiLower(scanner.token());
  const params = new Map<string, string>();
  while (scanner.consume(SEMI)) {
    scanner.skipWs();
    const name = asciiLower(scanner.token());
    scanner.expect(EQUAL);
    const value = scanner.peek() === DQUOTE ? scanner.quoted() : scanner.token();
    if (params.has(name)) scanner.fail();
    params.set(name, value);
  }
  scanner.skipWs();
  if (!scanner.atEnd) scanner.fail();
  return { type, subtype, params };
}
