import { readFileSync } from 'node:fs';
import { parseUri, type SipUri } from '../../sip/message/index.js';
import { CarriersFileError, parseCarriersFile } from './carriers-file.js';
import type { CarrierSettings, GatewayTransport, SipCarrier } from './sip-carrier.js';
import { SettingError } from '../../core/setting-error.js';

type Env = Record<string, string | undefined>;

/**
 * The outbound carriers, read once at start (config/config.ts reads the environment through
 * this; docs/configuration.md, "Outbound carriers"):
 *
 * - `VOXGATE_CARRIERS_FILE`: a JSON file of carriers (carriers-file.ts).
 * - `VOXGATE_CARRIER_URI`: the one-carrier shorthand, `sip:[user:password@]host[:port]`
 *   (`;transport=tcp`, `sips:` for TLS): a carrier named `default` with one gateway, taking
 *   every number, answering challenges with the user and password. Not with the file.
 * - `VOXGATE_CARRIER_RESPONSE_TIMEOUT` (4 s): how long a gateway has to respond at all.
 * - `VOXGATE_CARRIER_ANSWER_TIMEOUT` (0, off): how long a gateway may ring before the next.
 * - `VOXGATE_CARRIER_PROBE_INTERVAL` (0, off): seconds between OPTIONS probes of gateways.
 */
export function readCarrierSettings(env: Env): CarrierSettings {
  const uri = env.VOXGATE_CARRIER_URI || null;
  const file = env.VOXGATE_CARRIERS_FILE || null;
  if (uri !== null && file !== null) {
    throw new SettingError(
      'VOXGATE_CARRIERS_FILE',
      'cannot be set together with VOXGATE_CARRIER_URI (put that carrier in the file)',
      file,
    );
  }
  const carriers = file !== null ? readCarriersFile(file) : uri !== null ? [uriCarrier(uri)] : [];
  return {
    carriers,
    source: file !== null ? 'VOXGATE_CARRIERS_FILE' : uri !== null ? 'VOXGATE_CARRIER_URI' : null,
    responseTimeoutMs: seconds(env, 'VOXGATE_CARRIER_RESPONSE_TIMEOUT', 4, 1) * 1000,
    answerTimeoutMs: seconds(env, 'VOXGATE_CARRIER_ANSWER_TIMEOUT', 0, 0) * 1000,
    probeIntervalMs: seconds(env, 'VOXGATE_CARRIER_PROBE_INTERVAL', 0, 0) * 1000,
  };
}

/** `sip:user:password@host` as it may be shown: the password replaced by `***`. */
export function redactedUri(uri: string): string {
  return uri.replace(/^(sips?:[^:@;?]*):[^@]*@/i, '$1:***@');
}

function readCarriersFile(file: string): SipCarrier[] {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new SettingError(
      'VOXGATE_CARRIERS_FILE',
      `must name a readable JSON file (${(error as Error).message})`,
      file,
    );
  }
  try {
    return parseCarriersFile(document);
  } catch (error) {
    if (error instanceof CarriersFileError)
      throw new SettingError('VOXGATE_CARRIERS_FILE', error.message, file);
    throw error;
  }
}

function uriCarrier(raw: string): SipCarrier {
  const rule = 'must be a SIP URI sip:[user:password@]host[:port] (sips: for TLS)';
  let uri: SipUri;
  try {
    uri = parseUri(raw);
  } catch {
    throw new SettingError('VOXGATE_CARRIER_URI', rule, redactedUri(raw));
  }
  const transport = uri.params.get('transport')?.toLowerCase() ?? null;
  if (transport !== null && !['udp', 'tcp', 'tls'].includes(transport))
    throw new SettingError(
      'VOXGATE_CARRIER_URI',
      'transport must be udp, tcp or tls',
      redactedUri(raw),
    );
  return {
    name: 'default',
    gateways: [
      {
        host: uri.host.replace(/^\[|\]$/g, ''),
        port: uri.port,
        transport: transport as GatewayTransport | null,
        priority: 0,
        weight: 1,
      },
    ],
    auth:
      uri.user !== null && uri.password !== null
        ? { username: uri.user, password: uri.password, realm: null }
        : null,
    prefixes: [''],
    priority: 0,
    weight: 1,
    format: { e164Plus: null, techPrefix: '', fromUser: null, fromDomain: null },
    codecs: null,
    register: null,
    secure: uri.scheme === 'sips',
  };
}

function seconds(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min)
    throw new SettingError(name, `must be a whole number of seconds, at least ${min}`, raw);
  return Number(raw);
}
