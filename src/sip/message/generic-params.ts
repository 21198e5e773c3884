import { isIPv6 } from 'node:net';
import { DQUOTE, GEN_VALUE, TOKEN, hasClass, skipWsp } from './grammar.js';
import { checkHost } from './host.js';
import type { ValueScanner } from './value-scanner.js';

const SEMI = 0x3b;
const EQUAL = 0x3d;

/**
 * Reads *( SEMI generic-param ), with names lower-cased and values as written
 * (a quoted-string keeps its quotes: in SIP a quoted and an unquoted value differ). `check`
 * may refuse a parameter whose value does not have the form its header gives it.
 *
 *   generic-param = token [ EQUAL gen-value ]
 *   gen-value     = token / host / quoted-string
 */
export function readGenericParams(
  scanner: ValueScanner,
  check?: (key: string, value: string | null) => boolean,
): ReadonlyMap<string, string | null> {
  const text = scanner.text;
  let params: Map<string, string | null> | null = null;
  let pos = scanner.pos;
  for (;;) {
    let i = skipWsp(text, pos);
    if (text.charCodeAt(i) !== SEMI) break;
    i = skipWsp(text, i + 1);
    const nameStart = i;
    let upper = false;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (!hasClass(c, TOKEN)) break;
      if (c <= 0x5a && c >= 0x41) upper = true;
    }
    if (i === nameStart) scanner.failAt(i);
    const name = text.slice(nameStart, i);
    const key = upper ? name.toLowerCase() : name;
    let value: string | null = null;
    const equal = skipWsp(text, i);
    if (text.charCodeAt(equal) === EQUAL) {
      scanner.pos = skipWsp(text, equal + 1);
      value = scanner.peek() === DQUOTE ? scanner.rawQuoted() : readHostOrToken(scanner);
      i = scanner.pos;
    }
    pos = i;
    params ??= new Map();
    // A parameter given twice is ambiguous (two tags, two branches): refuse it.
    if (params.has(key) || (check !== undefined && !check(key, value))) scanner.failAt(i);
    params.set(key, value);
  }
  scanner.pos = pos;
  return params ?? NO_PARAMS;
}

const NO_PARAMS: ReadonlyMap<string, string | null> = new Map();

/**
 * A token, or a host (an IPv6 reference, or the bare IPv6 address RFC 3261 allows in the Via
 * received parameter).
 */
function readHostOrToken(scanner: ValueScanner): string {
  const text = scanner.text;
  const start = scanner.pos;
  let colons = false;
  let i = start;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!hasClass(c, GEN_VALUE)) break;
    if (c === 0x3a || c === 0x5b || c === 0x5d) colons = true;
  }
  if (i === start) scanner.fail();
  const value = text.slice(start, i);
  if (colons && checkHost(value) === null && (value.includes('%') || !isIPv6(value))) {
    scanner.fail();
  }
  scanner.pos = i;
  return value;
}
