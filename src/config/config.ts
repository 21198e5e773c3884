import { constants, accessSync, readFileSync, statSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { isIP } from 'node:net';
import { parseSmppCarriers, type SmppCarrier } from '../messaging/smpp/carrier-config.js';
import { CarrierSettingError, readCarrierSettings } from '../call/carriers/carrier-settings.js';
import type { CarrierSettings } from '../call/carriers/sip-carrier.js';
import { parseRedisTarget } from '../state/redis-target.js';
import { parseSecretKey } from '../state/secret-box.js';
import type { AccountLimits } from '../state/records.js';
import { OUTBOUND_PROFILES, type OutboundProfile } from '../core/address-policy.js';
import {
  DtlsSettingError,
  readDtlsSettings,
  type DtlsSettings,
} from '../media/dtls/dtls-settings.js';

/**
 * The runtime contract of DESIGN.md: every setting comes from the environment (a JSON file named
 * by VOXGATE_CONFIG_FILE may supply defaults for the same names), is checked here once at start,
 * and a bad value stops the start with a message naming the variable and its rule.
 */
export interface PortRange {
  min: number;
  max: number;
}

export interface Config {
  httpHost: string;
  httpPort: number;
  sipPort: number;
  sipWsPort: number;
  /** Address the SIP listeners bind (VOXGATE_SIP_HOST, default VOXGATE_HTTP_HOST). */
  sipHost: string;
  /** PEM certificate and key files: TLS on sipTlsPort and WSS instead of WS. */
  sipTls: { certFile: string; keyFile: string; port: number } | null;
  /** Digest nonces older than this many seconds are stale. */
  sipNonceLifetime: number;
  /** Registration intervals: 423 below the minimum, shortened above the maximum (seconds). */
  sipMinExpires: number;
  sipMaxExpires: number;
  /** Digest challenges offered over UDP, TCP and TLS, most preferred first (RFC 8760). */
  sipDigestAlgorithms: ('SHA-256' | 'MD5')[];
  /** Digest challenges offered over WebSocket (WS and WSS), most preferred first. */
  sipWsDigestAlgorithms: ('SHA-256' | 'MD5')[];
  /** User-Agent prefixes (lower case) challenged with MD5 alone, whatever the transport. */
  sipMd5OnlyAgents: string[];
  /**
   * Origins (scheme://host[:port], lower case) whose pages may open SIP WebSocket connections;
   * null allows every origin and clients that send none.
   */
  sipWsOrigins: string[] | null;
  /** Logs every SIP message in and out (SIGUSR2 toggles it while running). */
  sipTrace: boolean;
  rtpPorts: PortRange;
  /** Address the RTP sockets bind (VOXGATE_RTP_HOST, default VOXGATE_SIP_HOST). */
  rtpHost: string;
  /** Media worker threads (VOXGATE_MEDIA_WORKERS, default one less than the cores, at least 1). */
  mediaWorkers: number;
  /**
   * Plain SIP peers (not WebRTC) that offer Opus first get Opus; false keeps them on G.711
   * (VOXGATE_SIP_OPUS, default true). WebRTC legs always prefer Opus.
   */
  sipOpus: boolean;
  /** WebRTC's DTLS-SRTP: the certificate files and handshake timeout (media/dtls/dtls-settings.ts). */
  dtls: DtlsSettings;
  /** SCHED_RR priority for every thread of the process (1-99); null leaves scheduling alone. */
  realtimePriority: number | null;
  publicHost: string;
  /** Base put before resource URIs; '' means URIs are paths. */
  publicUrl: string;
  /** One server, `redis+cluster://` or `redis+sentinel://` (state/redis-target.ts). */
  redisUrl: string | null;
  /** Writes are acknowledged once the replicas of their master have them (Redis WAIT). */
  redisWaitForReplicas: boolean;
  /** Seconds a start waits for the store to take writes before it gives up (0: no wait). */
  storeStartWait: number;
  /** Where the embedded store keeps its snapshot; null keeps it in memory only. */
  dataDir: string | null;
  authId: string | null;
  authToken: string | null;
  /**
   * VOXGATE_SECRET_KEY as given (checked: 32 bytes, hex or base64): the key the stored secrets
   * are encrypted with (state/secret-box.ts). null: the embedded store's key file, or refused
   * on Redis.
   */
  secretKey: string | null;
  /**
   * The outbound SIP carriers (VOXGATE_CARRIERS_FILE, or VOXGATE_CARRIER_URI's one) and the
   * timing of calls through them (call/carriers/carrier-settings.ts).
   */
  carriers: CarrierSettings;
  /** DNS servers (host or host:port) for SIP server location; empty: the system's. */
  dnsServers: string[];
  /** Seconds an origination URI has to respond at all to an INVITE before the next is tried. */
  trunkResponseTimeout: number;
  /** Seconds a trunk URI may ring before the next is tried; 0: as long as the caller waits. */
  trunkAnswerTimeout: number;
  /** Seconds between OPTIONS probes of trunk origination URIs; 0: no probing. */
  trunkProbeInterval: number;
  /** Seconds a draining node lets its calls run before it hangs them up and exits. */
  drainTimeout: number;
  /**
   * Seconds shutdown waits, once the records of the calls it hung up are written, for the
   * peers to answer its BYEs (and CANCELs) before it closes SIP anyway.
   */
  shutdownGrace: number;
  /** The main account's limits when the operator set none (VOXGATE_LIMIT_*; 0: none). */
  limits: AccountLimits;
  /** This node's id among the nodes sharing Redis (VOXGATE_NODE_ID). */
  nodeId: string;
  /** The SMPP carriers of VOXGATE_SMPP_URL (empty: no SMS carrier). */
  smppCarriers: SmppCarrier[];
  /** CSV message rate deck (prefix,rate_per_unit,carrier_fee_per_unit,description). */
  messageRateDeck: string;
  /** Replaces look-alike characters with GSM ones before an SMS is encoded and counted. */
  smsSmartEncoding: boolean;
  /** How long the parts of an inbound concatenated SMS are waited for (ms). */
  smsPartTimeoutMs: number;
  /** The chat-app upstream (the Cloud API's Graph base URL with its version), no trailing slash. */
  chatAppGraphUrl: string;
  /** How long a request upstream may take before it answers 502 (ms). */
  chatAppTimeoutMs: number;
  /** How long a chat-app message upstream could not take waits before it is tried again (ms). */
  chatAppRetryMs: number;
  /** Bearer token of the operator interface (/operator/v1/); null turns it off. */
  operatorToken: string | null;
  /** The MMSC that takes MMS over MM7 (VOXGATE_MMS_MM7_URL); null sends no MMS. */
  mm7: Mm7Settings | null;
  /** Requests per second allowed per auth id per API endpoint; 0 turns the limit off. */
  rateLimit: number;
  /** CSV rate deck (prefix,rate_per_minute,description) the call records are billed from. */
  rateDeck: string;
  /** USD per started minute of an audio stream, as a decimal string. */
  streamRate: string;
  /** Where tenant-supplied URLs may lead (docs/calls-and-media.md, Outbound requests). */
  outboundProfile: OutboundProfile;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

/** An MMSC reached over MM7, and the credentials it and voxgate use with each other. */
export interface Mm7Settings {
  /** Where SubmitReq goes, without credentials or query. */
  url: string;
  username: string;
  password: string;
  vaspId: string;
  vasId: string;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    rule: string,
    value: string,
  ) {
    super(`${variable}=${JSON.stringify(value)} is invalid: ${rule}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function port(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  // 0 asks the system for a free port (tests run gateways side by side).
  if (!/^\d+$/.test(raw) || value > 65535) {
    throw new ConfigError(name, 'must be a port number from 1 to 65535, or 0 for any', raw);
  }
  return value;
}

/** Comma-separated IPv4 or IPv6 addresses, each with an optional port (host:port, [v6]:port). */
function dnsServers(env: Env, name: string): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return [];
  const list = raw.split(',').map((s) => s.trim());
  const ok = (entry: string) => {
    const match = /^(?:\[([0-9a-fA-F:]+)\]|([\d.]+))(?::(\d{1,5}))?$|^([0-9a-fA-F:]+)$/.exec(entry);
    if (!match) return false;
    const host = match[1] ?? match[2] ?? match[4]!;
    return isIP(host) !== 0 && (match[3] === undefined || Number(match[3]) <= 65535);
  };
  if (!list.every(ok)) {
    throw new ConfigError(
      name,
      'must be IP addresses, each with an optional :port, comma-separated',
      raw,
    );
  }
  return list;
}

/** Letters, digits, dots, dashes and underscores; the host name and process id by default. */
function nodeId(env: Env, name: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return `${hostname()}-${process.pid}`;
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(raw))
    throw new ConfigError(
      name,
      'must be 1 to 64 letters, digits, dots, dashes or underscores',
      raw,
    );
  return raw;
}

/** A limit: a positive whole number, or none (unset or 0). */
function limit(env: Env, name: string): number | null {
  const value = whole(env, name, 0, 0);
  return value === 0 ? null : value;
}

function whole(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) {
    throw new ConfigError(name, `must be a whole number of at least ${min}`, raw);
  }
  return Number(raw);
}

/** Unset, empty or 0: normal scheduling; 1 to 99: that SCHED_RR priority. */
function realtimePriority(env: Env, name: string): number | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  if (!/^\d+$/.test(raw) || Number(raw) > 99) {
    throw new ConfigError(name, 'must be a whole number from 0 (off) to 99', raw);
  }
  return Number(raw) === 0 ? null : Number(raw);
}

function outboundProfile(env: Env, name: string): OutboundProfile {
  const raw = env[name];
  if (raw === undefined || raw === '') return 'self-hosted';
  if (!(OUTBOUND_PROFILES as readonly string[]).includes(raw))
    throw new ConfigError(name, `must be one of ${OUTBOUND_PROFILES.join(', ')}`, raw);
  return raw as OutboundProfile;
}

function decimal(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw)) {
    throw new ConfigError(name, 'must be a decimal number such as 0.00300', raw);
  }
  return raw;
}

function digestAlgorithms(
  env: Env,
  name: string,
  fallback: ('SHA-256' | 'MD5')[],
): ('SHA-256' | 'MD5')[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const list = raw.split(',').map((a) => a.trim().toUpperCase());
  const valid =
    list.every((a) => a === 'SHA-256' || a === 'MD5') && new Set(list).size === list.length;
  if (!valid)
    throw new ConfigError(
      name,
      'must be SHA-256 and/or MD5, comma-separated, most preferred first',
      raw,
    );
  return list as ('SHA-256' | 'MD5')[];
}

/**
 * A comma-separated list of WebSocket origins (RFC 6454): each `scheme://host[:port]` with an
 * http or https scheme and nothing after the authority, compared in lower case.
 */
function origins(env: Env, name: string): string[] | null {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return null;
  const rule =
    'must be comma-separated origins such as https://app.example.com (scheme://host[:port])';
  const list = raw.split(',').map((origin) => {
    let parsed: URL;
    try {
      parsed = new URL(origin.trim());
    } catch {
      throw new ConfigError(name, rule, raw);
    }
    // An origin has no path, query, fragment or credentials (not even a trailing slash).
    const bare =
      /^[a-z]+:\/\/[^/?#@]+$/i.test(origin.trim()) && ['http:', 'https:'].includes(parsed.protocol);
    if (!bare) throw new ConfigError(name, rule, raw);
    // As browsers send it: lower case, without the scheme's default port.
    return parsed.origin;
  });
  return [...new Set(list)];
}

function flag(env: Env, name: string, fallback = false): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(name, 'must be true or false', raw);
  return raw === 'true';
}

function portRange(env: Env, name: string, fallback: PortRange): PortRange {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const match = /^(\d+)-(\d+)$/.exec(raw);
  const rule = 'must be two port numbers MIN-MAX with 1024 <= MIN < MAX <= 65535';
  if (!match) throw new ConfigError(name, rule, raw);
  const min = Number(match[1]);
  const max = Number(match[2]);
  if (min < 1024 || max > 65535 || min >= max) throw new ConfigError(name, rule, raw);
  return { min, max };
}

function url(env: Env, name: string, schemes: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  const rule = `must be a URL with scheme ${schemes.join(' or ')}`;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, rule, raw);
  }
  if (!schemes.includes(parsed.protocol.replace(/:$/, ''))) throw new ConfigError(name, rule, raw);
  return raw;
}

function redisUrl(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  try {
    parseRedisTarget(raw);
  } catch (error) {
    throw new ConfigError(name, (error as Error).message, raw);
  }
  return raw;
}

/** `replicas` or `none`; by default replicas on Sentinel and Cluster, where failover happens. */
function redisWait(env: Env, name: string, url: string | null): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '')
    return url !== null && parseRedisTarget(url).kind !== 'server';
  if (raw !== 'replicas' && raw !== 'none')
    throw new ConfigError(name, 'must be replicas or none', raw);
  return raw === 'replicas';
}

function host(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  // A host name (RFC 1123 labels), an IPv4 address or a bare IPv6 address.
  if (
    !/^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(
      raw,
    ) &&
    !/^[0-9A-Fa-f:.]+:[0-9A-Fa-f:.]*$/.test(raw)
  ) {
    throw new ConfigError(name, 'must be a host name or an IP address', raw);
  }
  return raw;
}

/** The bundled deck, relative to the working directory as the data directory is. */
export const DEFAULT_RATE_DECK = 'fixtures/rate-deck.csv';
export const DEFAULT_MESSAGE_RATE_DECK = 'fixtures/message-rate-deck.csv';
/** The public Graph API, at the version the chat-app client was written against. */
export const DEFAULT_CHATAPP_GRAPH_URL = 'https://graph.facebook.com/v21.0';

function operatorToken(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  // A secret: a message about it never repeats it.
  if (raw.length < 24 || /\s/.test(raw))
    throw new ConfigError(name, 'must be at least 24 characters without spaces', '(hidden)');
  return raw;
}

function secretKey(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  try {
    parseSecretKey(raw);
  } catch (error) {
    // A secret: a message about it never repeats it.
    throw new ConfigError(name, (error as Error).message, '(hidden)');
  }
  return raw.trim();
}

/** `http(s)://user:password@host[:port]/path?vasp_id=...&vas_id=...` */
function mm7Settings(env: Env, name: string): Mm7Settings | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  // The value holds a password: a message about it never repeats it.
  const rule = 'must be http(s)://user:password@host[:port]/path[?vasp_id=...&vas_id=...]';
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, rule, '(hidden)');
  }
  if (!['http:', 'https:'].includes(parsed.protocol) || !parsed.username || !parsed.password)
    throw new ConfigError(name, rule, '(hidden)');
  return {
    url: `${parsed.protocol}//${parsed.host}${parsed.pathname}`,
    username: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    vaspId: parsed.searchParams.get('vasp_id') ?? '',
    vasId: parsed.searchParams.get('vas_id') ?? '',
  };
}

function smppCarriers(env: Env, name: string): SmppCarrier[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return [];
  try {
    return parseSmppCarriers(raw);
  } catch (error) {
    // The value is shown without its passwords.
    throw new ConfigError(name, (error as Error).message, raw.replace(/:[^:@/\s]*@/g, ':***@'));
  }
}

function dtls(env: Env): DtlsSettings {
  try {
    return readDtlsSettings(env);
  } catch (error) {
    if (error instanceof DtlsSettingError)
      throw new ConfigError(error.variable, error.rule, error.value);
    throw error;
  }
}

function carriers(env: Env): CarrierSettings {
  try {
    return readCarrierSettings(env);
  } catch (error) {
    if (error instanceof CarrierSettingError)
      throw new ConfigError(error.variable, error.rule, error.value);
    throw error;
  }
}

function readableFile(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  try {
    accessSync(raw, constants.R_OK);
    if (statSync(raw).isFile()) return raw;
  } catch {
    // Reported below, as for a directory.
  }
  throw new ConfigError(name, 'must be the path of a readable file', raw);
}

export function readFileDefaults(env: Env): Env {
  const file = env.VOXGATE_CONFIG_FILE;
  if (!file) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(
      'VOXGATE_CONFIG_FILE',
      `must name a readable JSON file (${(error as Error).message})`,
      file,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(
      'VOXGATE_CONFIG_FILE',
      'must hold a JSON object of VOXGATE_* names to values',
      file,
    );
  }
  const out: Env = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!key.startsWith('VOXGATE_')) {
      throw new ConfigError(
        'VOXGATE_CONFIG_FILE',
        `may only set VOXGATE_* names, found ${key}`,
        file,
      );
    }
    out[key] = String(value);
  }
  return out;
}

export function loadConfig(processEnv: Env = process.env): Config {
  // The environment wins over the file.
  const env: Env = { ...readFileDefaults(processEnv), ...processEnv };

  const authId = env.VOXGATE_AUTH_ID || null;
  const authToken = env.VOXGATE_AUTH_TOKEN || null;
  if (authId !== null && !/^MA[A-Z0-9]{18}$/.test(authId)) {
    throw new ConfigError(
      'VOXGATE_AUTH_ID',
      'must be MA followed by 18 upper-case letters or digits',
      authId,
    );
  }
  if (authToken !== null && !/^[A-Za-z0-9]{40}$/.test(authToken)) {
    throw new ConfigError('VOXGATE_AUTH_TOKEN', 'must be 40 letters or digits', '<redacted>');
  }
  if ((authId === null) !== (authToken === null)) {
    const missing = authId === null ? 'VOXGATE_AUTH_ID' : 'VOXGATE_AUTH_TOKEN';
    throw new ConfigError(
      missing,
      'must be set together with the other of VOXGATE_AUTH_ID and VOXGATE_AUTH_TOKEN',
      '',
    );
  }

  const publicUrl = url(env, 'VOXGATE_PUBLIC_URL', ['http', 'https']);

  const rawRate = env.VOXGATE_RATE_LIMIT;
  let rateLimit = 100;
  if (rawRate !== undefined && rawRate !== '') {
    if (!/^\d+$/.test(rawRate)) {
      throw new ConfigError(
        'VOXGATE_RATE_LIMIT',
        'must be a whole number of requests per second (0 turns it off)',
        rawRate,
      );
    }
    rateLimit = Number(rawRate);
  }

  const rawLevel = env.VOXGATE_LOG_LEVEL ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(rawLevel)) {
    throw new ConfigError('VOXGATE_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`, rawLevel);
  }

  const dataDirRaw = env.VOXGATE_DATA_DIR;
  const httpHost = host(env, 'VOXGATE_HTTP_HOST', '0.0.0.0');
  const certFile = env.VOXGATE_SIP_TLS_CERT || null;
  const keyFile = env.VOXGATE_SIP_TLS_KEY || null;
  if ((certFile === null) !== (keyFile === null)) {
    const missing = certFile === null ? 'VOXGATE_SIP_TLS_CERT' : 'VOXGATE_SIP_TLS_KEY';
    throw new ConfigError(
      missing,
      'must be set together with the other of VOXGATE_SIP_TLS_CERT and VOXGATE_SIP_TLS_KEY',
      '',
    );
  }
  const sipMinExpires = whole(env, 'VOXGATE_SIP_MIN_EXPIRES', 60, 1);
  const sipMaxExpires = whole(env, 'VOXGATE_SIP_MAX_EXPIRES', 3600, 1);
  if (sipMaxExpires < sipMinExpires) {
    throw new ConfigError(
      'VOXGATE_SIP_MAX_EXPIRES',
      `must not be below VOXGATE_SIP_MIN_EXPIRES (${sipMinExpires})`,
      String(sipMaxExpires),
    );
  }

  return {
    httpHost,
    httpPort: port(env, 'VOXGATE_HTTP_PORT', 8080),
    sipPort: port(env, 'VOXGATE_SIP_PORT', 5060),
    sipWsPort: port(env, 'VOXGATE_SIP_WS_PORT', 5066),
    sipHost: host(env, 'VOXGATE_SIP_HOST', httpHost),
    sipTls:
      certFile && keyFile
        ? { certFile, keyFile, port: port(env, 'VOXGATE_SIP_TLS_PORT', 5061) }
        : null,
    sipNonceLifetime: whole(env, 'VOXGATE_SIP_NONCE_LIFETIME', 300, 1),
    sipMinExpires,
    sipMaxExpires,
    // MD5 alone over UDP, TCP and TLS: SIPp and many desk phones answer the first challenge
    // and know only MD5, and baresip 1.0 gives up on a 401 holding any other algorithm;
    // browser stacks over WebSocket answer the last challenge (docs/calls-and-media.md, SIP).
    sipDigestAlgorithms: digestAlgorithms(env, 'VOXGATE_SIP_DIGEST_ALGORITHMS', ['MD5']),
    sipWsDigestAlgorithms: digestAlgorithms(env, 'VOXGATE_SIP_WS_DIGEST_ALGORITHMS', [
      'SHA-256',
      'MD5',
    ]),
    sipMd5OnlyAgents: (env.VOXGATE_SIP_MD5_ONLY_AGENTS ?? '')
      .split(',')
      .map((a) => a.trim().toLowerCase())
      .filter(Boolean),
    sipWsOrigins: origins(env, 'VOXGATE_SIP_WS_ORIGINS'),
    sipTrace: flag(env, 'VOXGATE_SIP_TRACE'),
    sipOpus: flag(env, 'VOXGATE_SIP_OPUS', true),
    rtpPorts: portRange(env, 'VOXGATE_RTP_PORTS', { min: 20000, max: 29999 }),
    rtpHost: host(env, 'VOXGATE_RTP_HOST', host(env, 'VOXGATE_SIP_HOST', httpHost)),
    mediaWorkers: whole(env, 'VOXGATE_MEDIA_WORKERS', Math.max(1, availableParallelism() - 1), 1),
    dtls: dtls(env),
    realtimePriority: realtimePriority(env, 'VOXGATE_REALTIME_PRIORITY'),
    publicHost: host(env, 'VOXGATE_PUBLIC_HOST', '127.0.0.1'),
    publicUrl: publicUrl ? publicUrl.replace(/\/+$/, '') : '',
    redisUrl: redisUrl(env, 'VOXGATE_REDIS_URL'),
    redisWaitForReplicas: redisWait(env, 'VOXGATE_REDIS_WAIT', redisUrl(env, 'VOXGATE_REDIS_URL')),
    storeStartWait: whole(env, 'VOXGATE_STORE_START_WAIT', 60, 0),
    dataDir: dataDirRaw === undefined ? 'data' : dataDirRaw === '' ? null : dataDirRaw,
    authId,
    authToken,
    secretKey: secretKey(env, 'VOXGATE_SECRET_KEY'),
    carriers: carriers(env),
    dnsServers: dnsServers(env, 'VOXGATE_DNS_SERVERS'),
    trunkResponseTimeout: whole(env, 'VOXGATE_TRUNK_RESPONSE_TIMEOUT', 4, 1),
    trunkAnswerTimeout: whole(env, 'VOXGATE_TRUNK_ANSWER_TIMEOUT', 0, 0),
    trunkProbeInterval: whole(env, 'VOXGATE_TRUNK_PROBE_INTERVAL', 30, 0),
    drainTimeout: whole(env, 'VOXGATE_DRAIN_TIMEOUT', 600, 0),
    shutdownGrace: whole(env, 'VOXGATE_SHUTDOWN_GRACE', 3, 0),
    limits: {
      calls: limit(env, 'VOXGATE_LIMIT_CALLS'),
      calls_per_second: limit(env, 'VOXGATE_LIMIT_CALLS_PER_SECOND'),
      streams: limit(env, 'VOXGATE_LIMIT_STREAMS'),
      messages_per_second: limit(env, 'VOXGATE_LIMIT_MESSAGES_PER_SECOND'),
    },
    nodeId: nodeId(env, 'VOXGATE_NODE_ID'),
    smppCarriers: smppCarriers(env, 'VOXGATE_SMPP_URL'),
    messageRateDeck: readableFile(env, 'VOXGATE_MESSAGE_RATE_DECK', DEFAULT_MESSAGE_RATE_DECK),
    smsSmartEncoding: flag(env, 'VOXGATE_SMS_SMART_ENCODING'),
    smsPartTimeoutMs: whole(env, 'VOXGATE_SMS_PART_TIMEOUT', 60, 1) * 1000,
    chatAppGraphUrl: (
      url(env, 'VOXGATE_CHATAPP_GRAPH_URL', ['http', 'https']) ?? DEFAULT_CHATAPP_GRAPH_URL
    ).replace(/\/+$/, ''),
    chatAppTimeoutMs: whole(env, 'VOXGATE_CHATAPP_TIMEOUT', 10, 1) * 1000,
    chatAppRetryMs: whole(env, 'VOXGATE_CHATAPP_RETRY', 30, 1) * 1000,
    mm7: mm7Settings(env, 'VOXGATE_MMS_MM7_URL'),
    operatorToken: operatorToken(env, 'VOXGATE_OPERATOR_TOKEN'),
    rateLimit,
    rateDeck: readableFile(env, 'VOXGATE_RATE_DECK', DEFAULT_RATE_DECK),
    streamRate: decimal(env, 'VOXGATE_STREAM_RATE', '0.00300'),
    outboundProfile: outboundProfile(env, 'VOXGATE_OUTBOUND_PROFILE'),
    logLevel: rawLevel as Config['logLevel'],
  };
}
