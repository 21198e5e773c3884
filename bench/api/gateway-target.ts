import { isIPv4 } from 'node:net';

/**
 * A gateway the bench did not start (bench:calls and bench:streams in target mode): where its
 * REST API and its SIP listener are, the credentials the bench uses, and the address the
 * bench's own servers bind and advertise to it. The token is never printed nor written to a
 * results file.
 */
export interface GatewayTarget {
  /** The REST base, such as http://10.0.0.5:8080 (http only), without a trailing slash. */
  gatewayUrl: string;
  authId: string;
  authToken: string;
  /** Where the bench's callers send their INVITEs. */
  sip: { host: string; port: number };
  /** An IPv4 address of this machine that the gateway can reach. */
  listenHost: string;
}

/** The flags of target mode, for node:util parseArgs; the same in both benches. */
export const GATEWAY_TARGET_OPTIONS = {
  'gateway-url': { type: 'string' },
  'auth-id': { type: 'string' },
  'auth-token': { type: 'string' },
  sip: { type: 'string' },
  'listen-host': { type: 'string' },
} as const;

/** Read when --auth-id or --auth-token is not given, so that a token need not be typed. */
export const AUTH_ID_ENV = 'VOXGATE_BENCH_AUTH_ID';
export const AUTH_TOKEN_ENV = 'VOXGATE_BENCH_AUTH_TOKEN';

const LOCAL_LISTEN_HOST = '127.0.0.1';
const DEFAULT_SIP_PORT = 5060;

type TargetValues = Partial<Record<keyof typeof GATEWAY_TARGET_OPTIONS, string>>;

/**
 * The target the flags name, or null for the local run (no --gateway-url). Throws with the
 * flag's name when a value is missing or malformed; the token appears in no message.
 */
export function readGatewayTarget(
  values: TargetValues,
  env: Record<string, string | undefined>,
): GatewayTarget | null {
  if (values['gateway-url'] === undefined) {
    const stray = (['auth-id', 'auth-token', 'sip', 'listen-host'] as const).find(
      (name) => values[name] !== undefined,
    );
    if (stray)
      throw new Error(`--${stray} applies to a gateway named by --gateway-url, and none was given`);
    return null;
  }
  const gatewayUrl = restBase(values['gateway-url']);
  const authId = values['auth-id'] ?? env[AUTH_ID_ENV] ?? '';
  if (authId === '')
    throw new Error(`Expected the account's auth id in --auth-id or ${AUTH_ID_ENV}`);
  const authToken = values['auth-token'] ?? env[AUTH_TOKEN_ENV] ?? '';
  if (authToken === '')
    throw new Error(`Expected the account's auth token in ${AUTH_TOKEN_ENV} or --auth-token`);
  const listenHost = values['listen-host'] ?? LOCAL_LISTEN_HOST;
  if (!isIPv4(listenHost) || listenHost.startsWith('0.'))
    throw new Error(
      `Expected an IPv4 address of this machine the gateway can reach for --listen-host but received ${listenHost}`,
    );
  return {
    gatewayUrl,
    authId,
    authToken,
    sip: sipAddress(values.sip ?? new URL(gatewayUrl).hostname),
    listenHost,
  };
}

/**
 * An http URL without credentials, query or fragment; its path kept, no trailing slash. The load
 * generators speak plain HTTP (keep-alive node:http agents): a TLS proxy in front of the gateway
 * would be measured with it.
 */
function restBase(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`Expected an http:// URL for --gateway-url but received ${text}`);
  }
  if (url.protocol !== 'http:')
    throw new Error(
      `Expected an http:// URL for --gateway-url (the bench speaks plain HTTP) but received ${url.protocol}`,
    );
  if (url.username !== '' || url.password !== '')
    throw new Error(
      `Expected --gateway-url without credentials: give them in --auth-id and ${AUTH_TOKEN_ENV}`,
    );
  if (url.search !== '' || url.hash !== '')
    throw new Error(`Expected --gateway-url without a query or fragment but received ${text}`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * host or host:port, the host an IPv4 address or a name (the bench's callers and listeners are
 * IPv4); the port defaults to 5060.
 */
function sipAddress(text: string): { host: string; port: number } {
  const match = /^([^:[\]\s]+)(?::(\d+))?$/.exec(text);
  const port = Number(match?.[2] ?? DEFAULT_SIP_PORT);
  if (!match || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`Expected host:port (IPv4 or a name) for --sip but received ${text}`);
  return { host: match[1]!, port };
}

/** The Basic Authorization header value of the target's credentials. */
export function basicAuthorization(authId: string, authToken: string): string {
  return `Basic ${Buffer.from(`${authId}:${authToken}`).toString('base64')}`;
}

/** Something a local run does that a target run cannot, and why. */
export interface SkippedInTarget {
  what: string;
  reason: string;
}

/** Neither bench can show the log of a gateway it did not start. */
export const SKIPPED_GATEWAY_LOG: SkippedInTarget = {
  what: "the gateway's log",
  reason: 'its output goes where its operator sends it, not to the bench',
};

/** How a results file marks a target run: where, what the CPU came from, what was skipped. */
export interface TargetRecord {
  gatewayUrl: string;
  sip: string;
  listenHost: string;
  cpuFrom: 'metrics' | 'unavailable';
  /** What the CPU figure is, or why there is none. */
  cpu: string;
  skipped: SkippedInTarget[];
}

export function describeTarget(
  target: GatewayTarget,
  cpu: { from: 'metrics' | 'unavailable'; detail: string },
  skipped: SkippedInTarget[],
): TargetRecord {
  return {
    gatewayUrl: target.gatewayUrl,
    sip: `${target.sip.host}:${target.sip.port}`,
    listenHost: target.listenHost,
    cpuFrom: cpu.from,
    cpu: cpu.detail,
    skipped,
  };
}

/** The lines a target run prints before it starts. */
export function targetLines(record: TargetRecord): string[] {
  return [
    `target: gateway ${record.gatewayUrl}, SIP ${record.sip}; the bench listens on ${record.listenHost}`,
    `gateway CPU: ${record.cpu}`,
    ...record.skipped.map((s) => `skipped: ${s.what}: ${s.reason}`),
  ];
}
