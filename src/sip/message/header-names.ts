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

const CANONICAL_NAMES = [
  'Accept',
  'Accept-Contact',
  'Accept-Encoding',
  'Accept-Language',
  'Alert-Info',
  'Allow',
  'Allow-Events',
  'Authentication-Info',
  'Authorization',
  'Call-ID',
  'Call-Info',
  'Contact',
  'Content-Disposition',
  'Content-Encoding',
  'Content-Language',
  'Content-Length',
  'Content-Type',
  'CSeq',
  'Date',
  'Error-Info',
  'Event',
  'Expires',
  'From',
  'Identity',
  'Identity-Info',
  'In-Reply-To',
  'Max-Forwards',
  'MIME-Version',
  'Min-Expires',
  'Min-SE',
  'Organization',
  'P-Asserted-Identity',
  'P-Preferred-Identity',
  'Path',
  'Priority',
  'Privacy',
  'Proxy-Authenticate',
  'Proxy-Authorization',
  'Proxy-Require',
  'RAck',
  'Reason',
  'Record-Route',
  'Refer-To',
  'Referred-By',
  'Reject-Contact',
  'Replaces',
  'Reply-To',
  'Request-Disposition',
  'Require',
  'Retry-After',
  'Route',
  'RSeq',
  'Security-Client',
  'Security-Server',
  'Security-Verify',
  'Server',
  'Service-Route',
  'Session-Expires',
  'SIP-ETag',
  'SIP-If-Match',
  'Subject',
  'Subscription-State',
  'Supported',
  'Timestamp',
  'To',
  'Unsupported',
  'User-Agent',
  'Via',
  'Warning',
  'WWW-Authenticate',
];

const CANONICAL_BY_KEY: ReadonlyMap<string, string> = new Map(
  CANONICAL_NAMES.map((name) => [name.toLowerCase(), name]),
);

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

// The canonical spellings by length and last character, for a lookup that needs no hashing:
// most names on the wire are written exactly so.
const CANONICAL_BY_SHAPE: (readonly [spelling: string, key: string])[][] = [];
const shape = (name: string): number =>
  name.length * 128 + (name.charCodeAt(name.length - 1) & 127);
for (const name of CANONICAL_NAMES) {
  (CANONICAL_BY_SHAPE[shape(name)] ??= []).push([name, name.toLowerCase()]);
}

const COMPACT_BY_CODE: (string | undefined)[] = [];
for (const [letter, key] of COMPACT_FORMS) {
  COMPACT_BY_CODE[letter.charCodeAt(0)] = key;
  COMPACT_BY_CODE[letter.toUpperCase().charCodeAt(0)] = key;
}

// Keys of other names seen on the wire, bounded so hostile unique names cannot grow it.
const keyCache = new Map<string, string>();
const KEY_CACHE_LIMIT = 2048;

/**
 * The key of a name written in its canonical spelling or compact form, found without hashing;
 * undefined for any other name.
 */
export function knownHeaderKey(name: string): string | undefined {
  if (name.length === 1) return COMPACT_BY_CODE[name.charCodeAt(0)];
  const spellings = CANONICAL_BY_SHAPE[shape(name)];
  if (spellings !== undefined) {
    for (let i = 0; i < spellings.length; i++) {
      if (spellings[i]![0] === name) return spellings[i]![1];
    }
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
