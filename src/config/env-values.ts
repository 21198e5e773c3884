import { constants, accessSync, statSync } from 'node:fs';
import { readInboundCarrierMode, type InboundCarrierMode } from '../call/incoming-carriers.js';
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { parseSmppCarriers, type SmppCarrier } from '../messaging/smpp/carrier-config.js';
import { parseRedisTarget } from '../state/redis-target.js';
import { parseSecretKey } from '../state/secret-box.js';
import { OUTBOUND_PROFILES, type OutboundProfile } from '../core/address-policy.js';
import { SettingError } from '../core/setting-error.js';
import { readDtlsSettings, type DtlsSettings } from '../media/dtls/dtls-settings.js';
import { readCarrierSettings } from '../call/carriers/carrier-settings.js';
import { readHeartbeatSettings, type HeartbeatSettings } from '../cluster/heartbeat-settings.js';
import {
  readRecordingSettings,
  type RecordingSettings,
} from '../call/recordings/recording-settings.js';
import type { CarrierSettings } from '../call/carriers/sip-carrier.js';
import { ConfigError, type Env } from './config-error.js';

/**
 * How each kind of setting is read from the environment and checked: one function per kind
 * of value (a port, a host, a URL, a flag...), each throwing a ConfigError that names the
 * variable and its rule. config.ts says which variable is read as what.
 */

/** A range of ports, both ends included. */
export interface PortRange {
  min: number;
  max: number;
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

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function port(env: Env, name: string, fallback: number): number {
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
export function dnsServers(env: Env, name: string): string[] {
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
export function nodeId(env: Env, name: string): string {
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
export function limit(env: Env, name: string): number | null {
  const value = whole(env, name, 0, 0);
  return value === 0 ? null : value;
}

export function whole(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) {
    throw new ConfigError(name, `must be a whole number of at least ${min}`, raw);
  }
  return Number(raw);
}

/** A whole number from `min` to `max`, both included; `fallback` when unset or empty. */
export function wholeInRange(
  env: Env,
  name: string,
  fallback: number,
  range: { min: number; max: number },
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < range.min || Number(raw) > range.max) {
    throw new ConfigError(name, `must be a whole number from ${range.min} to ${range.max}`, raw);
  }
  return Number(raw);
}

/** Unset, empty or 0: normal scheduling; 1 to 99: that SCHED_RR priority. */
export function realtimePriority(env: Env, name: string): number | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  if (!/^\d+$/.test(raw) || Number(raw) > 99) {
    throw new ConfigError(name, 'must be a whole number from 0 (off) to 99', raw);
  }
  return Number(raw) === 0 ? null : Number(raw);
}

export function outboundProfile(env: Env, name: string): OutboundProfile {
  const raw = env[name];
  if (raw === undefined || raw === '') return 'self-hosted';
  if (!(OUTBOUND_PROFILES as readonly string[]).includes(raw))
    throw new ConfigError(name, `must be one of ${OUTBOUND_PROFILES.join(', ')}`, raw);
  return raw as OutboundProfile;
}

export function decimal(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw)) {
    throw new ConfigError(name, 'must be a decimal number such as 0.00300', raw);
  }
  return raw;
}

export function digestAlgorithms(
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
export function origins(env: Env, name: string): string[] | null {
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

export function flag(env: Env, name: string, fallback = false): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(name, 'must be true or false', raw);
  return raw === 'true';
}

export function portRange(env: Env, name: string, fallback: PortRange): PortRange {
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

export function url(env: Env, name: string, schemes: string[]): string | null {
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

export function redisUrl(env: Env, name: string): string | null {
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
export function redisWait(env: Env, name: string, url: string | null): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '')
    return url !== null && parseRedisTarget(url).kind !== 'server';
  if (raw !== 'replicas' && raw !== 'none')
    throw new ConfigError(name, 'must be replicas or none', raw);
  return raw === 'replicas';
}

export function host(env: Env, name: string, fallback: string): string {
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

export function operatorToken(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  // A secret: a message about it never repeats it.
  if (raw.length < 24 || /\s/.test(raw))
    throw new ConfigError(name, 'must be at least 24 characters without spaces', '(hidden)');
  return raw;
}

export function secretKey(env: Env, name: string): string | null {
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
export function mm7Settings(env: Env, name: string): Mm7Settings | null {
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

export function smppCarriers(env: Env, name: string): SmppCarrier[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return [];
  try {
    return parseSmppCarriers(raw);
  } catch (error) {
    // The value is shown without its passwords.
    throw new ConfigError(name, (error as Error).message, raw.replace(/:[^:@/\s]*@/g, ':***@'));
  }
}

export function inboundCarriers(env: Env): InboundCarrierMode {
  const raw = env.VOXGATE_INBOUND_CARRIERS;
  try {
    return readInboundCarrierMode(raw);
  } catch (error) {
    throw new ConfigError('VOXGATE_INBOUND_CARRIERS', (error as Error).message, raw ?? '');
  }
}

/** A part's own settings, read by the part; a SettingError of its becomes a ConfigError. */
function partSettings<T>(read: (env: Env) => T, env: Env): T {
  try {
    return read(env);
  } catch (error) {
    if (error instanceof SettingError) {
      throw new ConfigError(error.variable, error.rule, error.value);
    }
    throw error;
  }
}

export const dtls = (env: Env): DtlsSettings => partSettings(readDtlsSettings, env);
export const carriers = (env: Env): CarrierSettings => partSettings(readCarrierSettings, env);
export const recordings = (env: Env): RecordingSettings => partSettings(readRecordingSettings, env);
export const heartbeat = (env: Env): HeartbeatSettings => partSettings(readHeartbeatSettings, env);

export function readableFile(env: Env, name: string, fallback: string): string {
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
