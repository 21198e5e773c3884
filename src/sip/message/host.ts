import { isIPv6 } from 'node:net';
import { CodedText } from './coded-text.js';
import { asciiLower } from './grammar.js';

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
export function readHost(s: CodedText, from: number): string | null {
  if (s.at(from) === 0x5b /* [ */) return readIPv6Reference(s.text, from);
  const { text, codes, base } = s;
  let seen = 0;
  let previous = DOT; // as if a "." came before: the first char starts a label
  let labelStart = from;
  let toplabelStart = from;
  // For the IPv4 reading, counted on the way: dots, and whether a run of digits is too long.
  let dots = 0;
  let longRun = false;
  let i = from;
  for (; i < text.length; i++) {
    const c = codes[base + i]!;
    const kind = c < 128 ? HOST_CHARS[c]! : 0;
    if (kind === 0) break;
    if (kind === DOT) {
      if (previous & (DOT | DASH)) return null; // an empty label, or one ending in "-"
      if (i - labelStart > 3) longRun = true;
      toplabelStart = labelStart;
      labelStart = i + 1;
      dots++;
    } else if (kind === DASH && previous === DOT) {
      return null; // a label starting with "-"
    }
    seen |= kind;
    previous = kind;
  }
  if (i === from || previous === DASH) return null;
  if (i - labelStart > 3) longRun = true;
  // A trailing "." leaves the label before it as the toplabel.
  if (previous !== DOT) toplabelStart = labelStart;
  // Digits and dots only: an IPv4address when four runs of one to three digits.
  const ipv4 = (seen & (LOWER | UPPER | DASH)) === 0 && dots === 3 && !longRun && previous !== DOT;
  if (!ipv4 && (HOST_CHARS[codes[base + toplabelStart]!]! & (LOWER | UPPER)) === 0) return null;
  const host = text.slice(from, i);
  return seen & UPPER ? host.toLowerCase() : host;
}

const DIGIT_CHAR = 1;
const LOWER = 2;
const UPPER = 4;
const DASH = 8;
const DOT = 16;

/** The kind of each host character, 0 for the others. */
const HOST_CHARS = new Uint8Array(128);
for (let c = 0x30; c <= 0x39; c++) HOST_CHARS[c] = DIGIT_CHAR;
for (let c = 0x61; c <= 0x7a; c++) HOST_CHARS[c] = LOWER;
for (let c = 0x41; c <= 0x5a; c++) HOST_CHARS[c] = UPPER;
HOST_CHARS[0x2d] = DASH;
HOST_CHARS[0x2e] = DOT;

/** s[from, to) is four dot-separated runs of one to three digits. */
export function isIPv4(s: string, from = 0, to = s.length): boolean {
  let dots = 0;
  let run = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2e) {
      dots++;
      run = 0;
    } else if (c < 0x30 || c > 0x39 || ++run > 3) {
      return false;
    }
  }
  return dots === 3 && run > 0;
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
  const host = readHost(CodedText.of(raw), 0);
  return host !== null && host.length === raw.length ? host : null;
}

/** checkPort for s[from, to), a run of digits: no string is made for it. */
export function digitsPort(s: CodedText, from: number, to: number): number | null {
  if (from === to || to - from > 5) return null;
  let value = 0;
  for (let i = from; i < to; i++) value = value * 10 + (s.at(i) - 0x30);
  return value <= 65535 ? value : null;
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
