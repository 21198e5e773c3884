import { isIPv6 } from 'node:net';
import { commonParamName } from './common-param-names.js';
import { DQUOTE, GEN_VALUE, TOKEN, classOf } from './grammar.js';
import { checkHost } from './host.js';
import type { ValueScanner } from './value-scanner.js';

const SEMI = 0x3b;
const EQUAL = 0x3d;

/**
 * Reads *( SEMI generic-param ), with names lower-cased and values as written
 * (a quoted-string keeps its quotes: in SIP a quoted and an unquoted value differ). `check`
 * may refuse a parameter whose value does not have the form its header gives it; it is told
 * whether the value is a token, as the scan that read it found.
 *
 *   generic-param = token [ EQUAL gen-value ]
 *   gen-value     = token / host / quoted-string
 */
export function readGenericParams(
  scanner: ValueScanner,
  check?: (key: string, value: string | null, isToken: boolean) => boolean,
): ReadonlyMap<string, string | null> {
  const { text, codes, base } = scanner;
  let params: Map<string, string | null> | null = null;
  let pos = scanner.pos;
  for (;;) {
    let i = scanner.skipWsp(pos);
    if (scanner.at(i) !== SEMI) break;
    i = scanner.skipWsp(i + 1);
    const nameStart = i;
    let upper = false;
    for (; i < text.length; i++) {
      const c = codes[base + i]!;
      if ((classOf(c) & TOKEN) === 0) break;
      if (c <= 0x5a && c >= 0x41) upper = true;
    }
    if (i === nameStart) scanner.failAt(i);
    const key = upper
      ? text.slice(nameStart, i).toLowerCase()
      : (commonParamName(codes, base + nameStart, base + i) ?? text.slice(nameStart, i));
    let value: string | null = null;
    let isToken = false;
    const equal = scanner.skipWsp(i);
    if (scanner.at(equal) === EQUAL) {
      scanner.pos = scanner.skipWsp(equal + 1);
      if (scanner.peek() === DQUOTE) {
        value = scanner.rawQuoted();
      } else {
        value = readHostOrToken(scanner);
        isToken = hostOrToken.isToken;
      }
      i = scanner.pos;
    }
    pos = i;
    params ??= new Map();
    // A parameter given twice is ambiguous (two tags, two branches): refuse it.
    if (params.has(key) || (check !== undefined && !check(key, value, isToken))) {
      scanner.failAt(i);
    }
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
  const { text, codes, base } = scanner;
  const start = scanner.pos;
  let colons = false;
  let i = start;
  for (; i < text.length; i++) {
    const flags = classOf(codes[base + i]!);
    if ((flags & GEN_VALUE) === 0) break;
    // gen-value chars are token chars, and ":", "[" and "]" of an IPv6 host.
    if ((flags & TOKEN) === 0) colons = true;
  }
  if (i === start) scanner.fail();
  const value = text.slice(start, i);
  if (colons && checkHost(value) === null && (value.includes('%') || !isIPv6(value))) {
    scanner.fail();
  }
  scanner.pos = i;
  hostOrToken.isToken = !colons;
  return value;
}

/** Whether the last value readHostOrToken read is a token. */
const hostOrToken = { isToken: false };
