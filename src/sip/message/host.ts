import { isIPv6 } from 'node:net';
import { ALPHA, DIGIT, asciiLower, hasClass } from './grammar.js';

/**
 * Reads the host = hostname / IPv4address / IPv6reference (RFC 3261 25.1) that starts at
 * `from` in `s`, in one pass. Returns it lower-cased (the same length as read, so it ends at
 * `from + host.length`), or null when what is there does not follow the grammar. An IPv6
 * reference keeps its brackets.
 *
 *   hostname    = *( domainlabel "." ) toplabel [ "." ]
 *   domainlabel = alphanum / alphanum *( alphanum / "-" ) alphanum
 *   toplabel    = ALPHA / ALPHA *( alphanum / "-" ) alphanum
 *   IPv4address = 1*3DIGIT "." 1*3DIGIT "." 1*3DIGIT "." 1*3DIGIT
 */
export function readHost(s: string, from: number): string | null {
  if (s.charCodeAt(from) === 0x5b /* [ */) return readIPv6Reference(s, from);
  let labelLength = 0;
  let labelFirst = 0;
  let topFirst = 0;
  let previous = 0;
  let dots = 0;
  let digitsOnly = true;
  let upper = false;
  let i = from;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2e) {
      if (labelLength === 0 || previous === 0x2d) return null;
      if (labelLength > 3) digitsOnly = false;
      topFirst = labelFirst;
      labelLength = 0;
      dots++;
    } else if (hasClass(c, ALPHA | DIGIT) || (c === 0x2d && labelLength > 0)) {
      if (labelLength++ === 0) labelFirst = c;
      if (c > 0x39) {
        digitsOnly = false;
        if (c <= 0x5a) upper = true;
      } else if (c === 0x2d) {
        digitsOnly = false;
      }
    } else {
      break;
    }
    previous = c;
  }
  if (i === from) return null;
  const ipv4 = digitsOnly && dots === 3 && labelLength >= 1 && labelLength <= 3;
  if (!ipv4) {
    if (labelLength > 0) {
      if (previous === 0x2d) return null;
      topFirst = labelFirst;
    }
    // A trailing "." leaves the label before it as the toplabel.
    if (!hasClass(topFirst, ALPHA)) return null;
  }
  const host = s.slice(from, i);
  return upper ? host.toLowerCase() : host;
}

function readIPv6Reference(s: string, from: number): string | null {
  const close = s.indexOf(']', from);
  if (close === -1) return null;
  const address = s.slice(from + 1, close);
  // RFC 3261 25.1: IPv6reference = "[" IPv6address "]" (no zone identifier).
  if (address.includes('%') || !isIPv6(address)) return null;
  return asciiLower(s.slice(from, close + 1));
}

/** The host lower-cased when the whole of `raw` is one, else null. */
export function checkHost(raw: string): string | null {
  const host = readHost(raw, 0);
  return host !== null && host.length === raw.length ? host : null;
}

/** port = 1*DIGIT, at most 65535; null when it is not one. */
export function checkPort(raw: string): number | null {
  if (raw.length === 0 || raw.length > 5) return null;
  let value = 0;
  for (let i = 0; i < raw.length; i++) {
    const d = raw.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return null;
    value = value * 10 + d;
  }
  return value <= 65535 ? value : null;
}
