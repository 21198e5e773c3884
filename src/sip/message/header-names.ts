import type { CharCodes } from './coded-text.js';
import { asciiLower } from './grammar.js';

/**
 * Header names: compact forms, canonical spelling, and which headers are comma-separated
 * lists. A header is looked up by its key: the lower-cased long name.
 */

// RFC 3261 7.3.3: compact forms, plus those the extensions registered with IANA.
const COMPACT_FORMS: ReadonlyMap<string, string> = new Map([
  ['a', 'accept-contact'], // RFC 3841
  ['b', 'referred-by'], // RFC 3892
  ['c', 'content-type'],
  ['d', 'request-disposition'], // RFC 3841
  ['e', 'content-encoding'],
  ['f', 'from'],
  ['i', 'call-id'],
  ['j', 'reject-contact'], // RFC 3841
  ['k', 'supported'],
  ['l', 'content-length'],
  ['m', 'contact'],
  ['n', 'identity-info'], // RFC 4474
  ['o', 'event'], // RFC 6665
  ['r', 'refer-to'], // RFC 3515
  ['s', 'subject'],
  ['t', 'to'],
  ['u', 'allow-events'], // RFC 6665
  ['v', 'via'],
  ['x', 'session-expires'], // RFC 4028
  ['y', 'identity'], // RFC 8224
]);

// The keys are written out rather than lower-cased at load: string literals are interned, so
// a key read off the wire and one an accessor asks for are then the same string, and telling
// two keys apart is a pointer comparison instead of a char by char one.
const CANONICAL_NAMES: readonly (readonly [key: string, name: string])[] = [
  ['accept', 'Accept'],
  ['accept-contact', 'Accept-Contact'],
  ['accept-encoding', 'Accept-Encoding'],
  ['accept-language', 'Accept-Language'],
  ['alert-info', 'Alert-Info'],
  ['allow', 'Allow'],
  ['allow-events', 'Allow-Events'],
  ['authentication-info', 'Authentication-Info'],
  ['authorization', 'Authorization'],
  ['call-id', 'Call-ID'],
  ['call-info', 'Call-Info'],
  ['contact', 'Contact'],
  ['content-disposition', 'Content-Disposition'],
  ['content-encoding', 'Content-Encoding'],
  ['content-language', 'Content-Language'],
  ['content-length', 'Content-Length'],
  ['content-type', 'Content-Type'],
  ['cseq', 'CSeq'],
  ['date', 'Date'],
  ['error-info', 'Error-Info'],
  ['event', 'Event'],
  ['expires', 'Expires'],
  ['from', 'From'],
  ['identity', 'Identity'],
  ['identity-info', 'Identity-Info'],
  ['in-reply-to', 'In-Reply-To'],
  ['max-forwards', 'Max-Forwards'],
  ['mime-version', 'MIME-Version'],
  ['min-expires', 'Min-Expires'],
  ['min-se', 'Min-SE'],
  ['organization', 'Organization'],
  ['p-asserted-identity', 'P-Asserted-Identity'],
  ['p-preferred-identity', 'P-Preferred-Identity'],
  ['path', 'Path'],
  ['priority', 'Priority'],
  ['privacy', 'Privacy'],
  ['proxy-authenticate', 'Proxy-Authenticate'],
  ['proxy-authorization', 'Proxy-Authorization'],
  ['proxy-require', 'Proxy-Require'],
  ['rack', 'RAck'],
  ['reason', 'Reason'],
  ['record-route', 'Record-Route'],
  ['refer-to', 'Refer-To'],
  ['referred-by', 'Referred-By'],
  ['reject-contact', 'Reject-Contact'],
  ['replaces', 'Replaces'],
  ['reply-to', 'Reply-To'],
  ['request-disposition', 'Request-Disposition'],
  ['require', 'Require'],
  ['retry-after', 'Retry-After'],
  ['route', 'Route'],
  ['rseq', 'RSeq'],
  ['security-client', 'Security-Client'],
  ['security-server', 'Security-Server'],
  ['security-verify', 'Security-Verify'],
  ['server', 'Server'],
  ['service-route', 'Service-Route'],
  ['session-expires', 'Session-Expires'],
  ['sip-etag', 'SIP-ETag'],
  ['sip-if-match', 'SIP-If-Match'],
  ['subject', 'Subject'],
  ['subscription-state', 'Subscription-State'],
  ['supported', 'Supported'],
  ['timestamp', 'Timestamp'],
  ['to', 'To'],
  ['unsupported', 'Unsupported'],
  ['user-agent', 'User-Agent'],
  ['via', 'Via'],
  ['warning', 'Warning'],
  ['www-authenticate', 'WWW-Authenticate'],
];

const CANONICAL_BY_KEY: ReadonlyMap<string, string> = new Map(CANONICAL_NAMES);

/**
 * Headers whose whole value is a comma-separated list (RFC 3261 7.3.1), so that several rows
 * and commas within one row mean the same. Everything else is one value per row: unknown
 * headers (their grammar is unknown), Date (its value holds a comma), and the credentials
 * and challenges, which RFC 3261 7.3.1 names as not comma-combinable.
 */
const LIST_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-contact',
  'accept-encoding',
  'accept-language',
  'alert-info',
  'allow',
  'allow-events',
  'call-info',
  'contact',
  'content-encoding',
  'content-language',
  'error-info',
  'in-reply-to',
  'p-asserted-identity',
  'p-preferred-identity',
  'path',
  'proxy-require',
  'reason',
  'record-route',
  'reject-contact',
  'request-disposition',
  'require',
  'route',
  'security-client',
  'security-server',
  'security-verify',
  'service-route',
  'supported',
  'unsupported',
  'via',
  'warning',
]);

/** A header name as commonly written, and its key. */
interface KnownName {
  readonly name: string;
  readonly key: string;
  /** The name's char codes. */
  readonly codes: Uint8Array;
  /** Its first eight chars, packed (see packName). */
  readonly first4: number;
  readonly next4: number;
}

/**
 * Packs the chars of a name into two numbers as they are scanned: seven bits each, the first
 * four into `first4` and the next four into `next4`. Token chars are ASCII, so this is exact:
 * two names of the same length that pack alike agree on their first eight chars, and only
 * chars past those are left to compare.
 */
export function packName(packed: number, code: number): number {
  return (packed << 7) | code;
}

const TABLE_MASK = 1023;
const slotOf = (length: number, first4: number, next4: number): number =>
  (first4 ^ (next4 * 31) ^ length) & TABLE_MASK;

// The canonical spellings and the compact forms (in either case), by slot: most names on the
// wire are written exactly so. Filled in full up front, as an array written sparsely would be
// kept as a slower dictionary.
const KNOWN: (KnownName[] | undefined)[] = Array.from({ length: TABLE_MASK + 1 }, () => undefined);
const addKnown = (name: string, key: string): void => {
  const codes = Buffer.from(name, 'latin1');
  const first4 = codes.subarray(0, 4).reduce(packName, 0);
  const next4 = codes.subarray(4, 8).reduce(packName, 0);
  const known = { name, key, codes, first4, next4 };
  (KNOWN[slotOf(codes.length, first4, next4)] ??= []).push(known);
};
for (const [key, name] of CANONICAL_NAMES) addKnown(name, key);
for (const [letter, key] of COMPACT_FORMS) {
  addKnown(letter, key);
  addKnown(letter.toUpperCase(), key);
}

/**
 * The name whose char codes, all token chars, are codes[from, to) and pack to `first4` and
 * `next4`, when it is a canonical spelling or a compact form; undefined for any other name.
 * Compared in place: no string is made for the name.
 */
export function knownNameIn(
  codes: CharCodes,
  from: number,
  to: number,
  first4: number,
  next4: number,
): KnownName | undefined {
  const length = to - from;
  const candidates = KNOWN[slotOf(length, first4, next4)];
  if (candidates === undefined) return undefined;
  for (let i = 0; i < candidates.length; i++) {
    const known = candidates[i]!;
    if (known.first4 !== first4 || known.next4 !== next4 || known.codes.length !== length) {
      continue;
    }
    let at = 8;
    while (at < length && codes[from + at] === known.codes[at]) at++;
    if (at >= length) return known;
  }
  return undefined;
}

// Keys of other names seen on the wire, bounded so hostile unique names cannot grow it.
const keyCache = new Map<string, string>();
const KEY_CACHE_LIMIT = 2048;

/**
 * The key of a name written in its canonical spelling or compact form, found in the table of
 * known names rather than by lower-casing; undefined for any other name.
 */
export function knownHeaderKey(name: string): string | undefined {
  let first4 = 0;
  let next4 = 0;
  for (let i = 0; i < 8 && i < name.length; i++) {
    // Masked: a name here may hold any char; the comparison below is what decides.
    if (i < 4) first4 = packName(first4, name.charCodeAt(i) & 0x7f);
    else next4 = packName(next4, name.charCodeAt(i) & 0x7f);
  }
  const candidates = KNOWN[slotOf(name.length, first4, next4)];
  if (candidates === undefined) return undefined;
  for (let i = 0; i < candidates.length; i++) {
    if (candidates[i]!.name === name) return candidates[i]!.key;
  }
  return undefined;
}

/** The lookup key of a header name: lower-cased, compact form expanded. */
export function headerKey(name: string): string {
  let key = knownHeaderKey(name) ?? keyCache.get(name);
  if (key !== undefined) return key;
  key = asciiLower(name);
  if (key.length === 1) key = COMPACT_FORMS.get(key) ?? key;
  if (keyCache.size < KEY_CACHE_LIMIT) keyCache.set(name, key);
  return key;
}

/** The name to write for a header: its canonical spelling when known, else as given. */
export function canonicalName(key: string, given: string): string {
  return CANONICAL_BY_KEY.get(key) ?? given;
}

export function isListHeader(key: string): boolean {
  return LIST_HEADERS.has(key);
}
