/** How a carrier wants messages longer than one part (wire-compat-messaging.md). */
export type LongMessageMode = 'udh' | 'udh16' | 'sar' | 'payload';

/** One SMPP carrier of VOXGATE_SMPP_URL. */
export interface SmppCarrier {
  name: string;
  host: string;
  port: number;
  tls: boolean;
  /** Accepts a certificate no authority vouches for (test SMSCs). */
  tlsInsecure: boolean;
  systemId: string;
  password: string;
  systemType: string;
  /** Destination digit prefixes this carrier takes; empty: the default route. */
  prefixes: string[];
  /** Transceiver binds opened to it. */
  binds: number;
  /** Unanswered submit_sm per bind. */
  window: number;
  /** Messages per second per bind; 0: no cap. */
  mps: number;
  responseTimeoutMs: number;
  enquireLinkMs: number;
  longMessages: LongMessageMode;
}

const LONG_MODES: readonly LongMessageMode[] = ['udh', 'udh16', 'sar', 'payload'];
const PARAMETERS = [
  'name',
  'prefixes',
  'binds',
  'window',
  'mps',
  'timeout',
  'enquire_link',
  'long',
  'system_type',
  'tls_insecure',
];

/**
 * Reads VOXGATE_SMPP_URL: one or more carriers separated by whitespace, each
 * `smpp://system_id:password@host:port` (`ssmpp://` for TLS) with optional query parameters:
 * `name`, `prefixes` (comma-separated destination prefixes; none: the default route), `binds`
 * (1-16, default 1), `window` (1-1000, default 10), `mps` (per bind, 0 = no cap, default 100),
 * `timeout` (response timeout ms, default 10000), `enquire_link` (seconds, default 30), `long`
 * (udh, udh16, sar or payload; default udh), `system_type`, `tls_insecure` (true or false).
 * Throws an Error naming the parameter and its rule.
 */
export function parseSmppCarriers(value: string): SmppCarrier[] {
  const carriers = value
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map((entry, k) => parseCarrier(entry, k));
  const names = new Set<string>();
  for (const carrier of carriers) {
    if (names.has(carrier.name)) throw new Error(`carrier name ${carrier.name} is used twice`);
    names.add(carrier.name);
  }
  return carriers;
}

function parseCarrier(entry: string, index: number): SmppCarrier {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new Error('each carrier must be a URL smpp://system_id:password@host:port');
  }
  if (url.protocol !== 'smpp:' && url.protocol !== 'ssmpp:')
    throw new Error('each carrier URL must have the scheme smpp or ssmpp (TLS)');
  if (!url.hostname) throw new Error('each carrier URL must name a host');
  if (!url.username) throw new Error('each carrier URL must give the system_id as its user');
  for (const key of url.searchParams.keys())
    if (!PARAMETERS.includes(key))
      throw new Error(`unknown carrier parameter ${key} (known: ${PARAMETERS.join(', ')})`);
  const q = url.searchParams;
  const long = q.get('long') ?? 'udh';
  if (!(LONG_MODES as readonly string[]).includes(long))
    throw new Error(`long must be one of ${LONG_MODES.join(', ')}`);
  const prefixes = (q.get('prefixes') ?? '')
    .split(',')
    .map((p) => p.trim().replace(/^\+/, ''))
    .filter(Boolean);
  for (const prefix of prefixes)
    if (!/^\d{1,15}$/.test(prefix)) throw new Error(`prefixes must be digits, got ${prefix}`);
  const tlsInsecure = q.get('tls_insecure') ?? 'false';
  if (tlsInsecure !== 'true' && tlsInsecure !== 'false')
    throw new Error('tls_insecure must be true or false');
  // SMPP 3.4 5.2.1-5.2.3: C-octet strings of at most 16, 9 and 13 octets with their NUL.
  const fields: [string, string, number][] = [
    ['system_id', decodeURIComponent(url.username), 15],
    ['password', decodeURIComponent(url.password), 8],
    ['system_type', q.get('system_type') ?? '', 12],
  ];
  for (const [field, value, most] of fields)
    if (Buffer.byteLength(value, 'latin1') > most || /[^\x20-\x7e]/.test(value))
      throw new Error(
        `the ${field} must be at most ${most} printable ASCII characters (SMPP 3.4), got ${value.length}`,
      );
  const name = q.get('name') ?? `carrier${index + 1}`;
  if (!/^[A-Za-z0-9_.-]{1,40}$/.test(name))
    throw new Error('name must be 1 to 40 letters, digits, dots, dashes or underscores');
  return {
    name,
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : 2775,
    tls: url.protocol === 'ssmpp:',
    tlsInsecure: tlsInsecure === 'true',
    systemId: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    systemType: q.get('system_type') ?? '',
    prefixes,
    binds: integer(q, 'binds', 1, 1, 16),
    window: integer(q, 'window', 10, 1, 1000),
    mps: integer(q, 'mps', 100, 0, 100_000),
    responseTimeoutMs: integer(q, 'timeout', 10_000, 100, 300_000),
    enquireLinkMs: integer(q, 'enquire_link', 30, 1, 3600) * 1000,
    longMessages: long as LongMessageMode,
  };
}

function integer(q: URLSearchParams, name: string, fallback: number, min: number, max: number) {
  const raw = q.get(name);
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return value;
}

/** The carrier of a destination: the longest matching prefix, else the default route. */
export function routeCarrier<T extends Pick<SmppCarrier, 'prefixes'>>(
  carriers: readonly T[],
  destination: string,
): T | null {
  return routeCarriers(carriers, destination)[0] ?? null;
}

/**
 * Every carrier that takes a destination, best first: those with a matching prefix, longest
 * match first (in configuration order on a tie), then the default routes (no prefixes) in
 * configuration order. The first is the route; the others are where it fails over to.
 */
export function routeCarriers<T extends Pick<SmppCarrier, 'prefixes'>>(
  carriers: readonly T[],
  destination: string,
): T[] {
  const matched = carriers
    .map((carrier, order) => ({
      carrier,
      order,
      length: Math.max(
        -1,
        ...carrier.prefixes.filter((p) => destination.startsWith(p)).map((p) => p.length),
      ),
    }))
    .filter((m) => m.length >= 0)
    .sort((a, b) => b.length - a.length || a.order - b.order)
    .map((m) => m.carrier);
  return [...matched, ...carriers.filter((c) => c.prefixes.length === 0)];
}
