/**
 * Character classes of the RFC 3261 section 25.1 grammar, as one lookup table indexed by octet.
 *
 * Message text is handled as latin1 strings (one char per octet), so every char code is
 * below 256 and a table lookup classifies it.
 */

export const TOKEN = 1 << 0;
export const ALPHA = 1 << 1;
export const DIGIT = 1 << 2;
const UNRESERVED = 1 << 3;
/** user = 1*( unreserved / escaped / user-unreserved ), without the escape. */
export const USER = 1 << 4;
/** password = *( unreserved / escaped / "&" / "=" / "+" / "$" / "," ), without the escape. */
export const PASSWORD = 1 << 5;
/** paramchar = param-unreserved / unreserved / escaped, without the escape. */
export const PARAM = 1 << 6;
/** hname / hvalue characters: hnv-unreserved / unreserved / escaped, without the escape. */
export const HNV = 1 << 7;
/** uric of absoluteURI (reserved / unreserved / escaped) plus "[" "]" for IPv6 references. */
export const URIC = 1 << 8;
/** word, the Call-ID alphabet. */
export const WORD = 1 << 9;
export const HEX = 1 << 10;
/** token68 (RFC 7235), used by Bearer credentials (RFC 8898). */
export const TOKEN68 = 1 << 11;
/** gen-value = token / host / quoted-string: token chars, and ":" "[" "]" of IPv6 hosts. */
export const GEN_VALUE = 1 << 12;

export const SP = 0x20;
export const HTAB = 0x09;
export const DQUOTE = 0x22;
export const BACKSLASH = 0x5c;

const table = new Uint16Array(256);

function mark(chars: string, flag: number): void {
  for (let i = 0; i < chars.length; i++) table[chars.charCodeAt(i)]! |= flag;
}

function markRange(from: string, to: string, flag: number): void {
  for (let c = from.charCodeAt(0); c <= to.charCodeAt(0); c++) table[c]! |= flag;
}

const ALNUM_FLAGS =
  TOKEN | UNRESERVED | USER | PASSWORD | PARAM | HNV | URIC | WORD | TOKEN68 | GEN_VALUE;
markRange('a', 'z', ALPHA | ALNUM_FLAGS);
markRange('A', 'Z', ALPHA | ALNUM_FLAGS);
markRange('0', '9', DIGIT | HEX | ALNUM_FLAGS);
markRange('a', 'f', HEX);
markRange('A', 'F', HEX);
// token = 1*(alphanum / "-" / "." / "!" / "%" / "*" / "_" / "+" / "`" / "'" / "~" )
mark("-.!%*_+`'~", TOKEN | GEN_VALUE);
mark(':[]', GEN_VALUE);
// mark = "-" / "_" / "." / "!" / "~" / "*" / "'" / "(" / ")"
mark("-_.!~*'()", UNRESERVED | USER | PASSWORD | PARAM | HNV | URIC);
// user-unreserved = "&" / "=" / "+" / "$" / "," / ";" / "?" / "/"
mark('&=+$,;?/', USER);
mark('&=+$,', PASSWORD);
// param-unreserved = "[" / "]" / "/" / ":" / "&" / "+" / "$"
mark('[]/:&+$', PARAM);
// hnv-unreserved = "[" / "]" / "/" / "?" / ":" / "+" / "$"
mark('[]/?:+$', HNV);
// reserved = ";" / "/" / "?" / ":" / "@" / "&" / "=" / "+" / "$" / ","
mark(';/?:@&=+$,%[]', URIC);
// word = 1*(alphanum / "-" / "." / "!" / "%" / "*" / "_" / "+" / "`" / "'" / "~" / "(" / ")" /
//        "<" / ">" / ":" / "\" / DQUOTE / "/" / "[" / "]" / "?" / "{" / "}" )
mark('-.!%*_+`\'~()<>:\\"/[]?{}', WORD);
mark('-._~+/', TOKEN68);

/** The class flags of a char code (none for -1, the code past the end of a text). */
export function classOf(code: number): number {
  return code >= 0 && code < 256 ? table[code]! : 0;
}

export function hasClass(code: number, flag: number): boolean {
  return (classOf(code) & flag) !== 0;
}

export function isWsp(code: number): boolean {
  return code === SP || code === HTAB;
}

/** True when every char of s[from, to) belongs to the class and the range is not empty. */
export function allOfClass(s: string, flag: number, from = 0, to = s.length): boolean {
  if (from >= to) return false;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c > 255 || (table[c]! & flag) === 0) return false;
  }
  return true;
}

export function isToken(s: string): boolean {
  return allOfClass(s, TOKEN);
}

/** Removes SP and HTAB (only those: JS trim() would also eat octets 0x85 and 0xA0). */
export function trimWsp(s: string, from = 0, to = s.length): string {
  while (from < to && isWsp(s.charCodeAt(from))) from++;
  while (to > from && isWsp(s.charCodeAt(to - 1))) to--;
  return from === 0 && to === s.length ? s : s.slice(from, to);
}

/** Parses 1*DIGIT in s[from, to) as an integer no greater than max; -1 when it is not. */
export function parseDigits(s: string, max: number, from = 0, to = s.length): number {
  if (from >= to) return -1;
  let value = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 0x30;
    if (c < 0 || c > 9) return -1;
    value = value * 10 + c;
    if (value > max) return -1;
  }
  return value;
}

/** Lower-cases ASCII letters only (header and parameter names are ASCII tokens). */
export function asciiLower(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) return s.toLowerCase();
  }
  return s;
}
