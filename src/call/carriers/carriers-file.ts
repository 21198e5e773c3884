import { isIP } from 'node:net';
import { AUDIO_CODECS, type AudioCodec } from '../../sip/sdp/audio-codecs.js';
import type {
  CarrierAuth,
  CarrierGateway,
  CarrierRegister,
  GatewayTransport,
  SipCarrier,
} from './sip-carrier.js';

/**
 * What is wrong with a carriers file, as one phrase naming the carrier and the field:
 * `carrier "acme" (carriers[0]): gateways[1].port must be a whole number from 1 to 65535`.
 */
export class CarriersFileError extends Error {}

type Json = Record<string, unknown>;

const CARRIER_FIELDS = [
  'name',
  'gateways',
  'auth',
  'prefixes',
  'priority',
  'weight',
  'e164_plus',
  'tech_prefix',
  'from_user',
  'from_domain',
  'codecs',
  'register',
];
const GATEWAY_FIELDS = ['host', 'port', 'transport', 'priority', 'weight'];
const AUTH_FIELDS = ['username', 'password', 'realm'];
const REGISTER_FIELDS = ['expires', 'user', 'domain'];
const TRANSPORTS: readonly GatewayTransport[] = ['udp', 'tcp', 'tls'];
/** RFC 3261 25.1 `hostname`: labels of letters, digits and hyphens. */
const HOSTNAME = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z](?:[a-z0-9-]*[a-z0-9])?\.?$/i;
/** What a user part may hold unescaped (RFC 3261 25.1 `unreserved` and `user-unreserved`). */
const USER = /^[A-Za-z0-9\-_.!~*'()&=+$,;?/#]+$/;

/**
 * Reads the carriers of a VOXGATE_CARRIERS_FILE document (docs/configuration.md, "Outbound
 * carriers"): `{ "carriers": [ ... ] }`. Unknown fields are refused too, so that a misspelt
 * `prefix` does not silently route every number.
 */
export function parseCarriersFile(document: unknown): SipCarrier[] {
  if (!isObject(document) || !Array.isArray(document.carriers)) {
    throw new CarriersFileError('must hold a JSON object with a "carriers" array');
  }
  unknownFields(document, ['carriers'], 'the file');
  if (document.carriers.length === 0) throw new CarriersFileError('"carriers" is empty');
  const names = new Set<string>();
  return document.carriers.map((entry: unknown, index) => {
    const named = isObject(entry) && typeof entry.name === 'string' ? entry.name : null;
    const where = named !== null ? `carrier "${named}" (carriers[${index}])` : `carriers[${index}]`;
    try {
      const carrier = parseCarrier(entry);
      if (names.has(carrier.name)) throw new CarriersFileError(`name is used twice`);
      names.add(carrier.name);
      return carrier;
    } catch (error) {
      if (error instanceof CarriersFileError)
        throw new CarriersFileError(`${where}: ${error.message}`);
      throw error;
    }
  });
}

function parseCarrier(entry: unknown): SipCarrier {
  if (!isObject(entry)) throw new CarriersFileError('must be an object');
  unknownFields(entry, CARRIER_FIELDS, 'the carrier');
  const name = text(entry, 'name', /^[A-Za-z0-9_.-]{1,64}$/, '1-64 letters, digits, _ . or -');
  if (!Array.isArray(entry.gateways) || entry.gateways.length === 0)
    throw new CarriersFileError('gateways must be a non-empty array');
  const gateways = entry.gateways.map((g: unknown, k) => parseGateway(g, `gateways[${k}]`));
  const prefixes = entry.prefixes ?? [''];
  if (
    !Array.isArray(prefixes) ||
    prefixes.length === 0 ||
    !prefixes.every((p) => typeof p === 'string' && /^\d{0,15}$/.test(p))
  ) {
    throw new CarriersFileError(
      'prefixes must be a non-empty array of digit strings ("" takes every number)',
    );
  }
  const e164Plus = entry.e164_plus ?? null;
  if (e164Plus !== null && typeof e164Plus !== 'boolean')
    throw new CarriersFileError('e164_plus must be true or false');
  return {
    name,
    gateways,
    auth: entry.auth === undefined ? null : parseAuth(entry.auth),
    prefixes: [...new Set(prefixes as string[])],
    priority: whole(entry, 'priority', 0, 0, 65535),
    weight: whole(entry, 'weight', 1, 0, 65535),
    format: {
      e164Plus,
      techPrefix: optionalText(entry, 'tech_prefix', USER, 'URI user characters') ?? '',
      fromUser: optionalText(entry, 'from_user', USER, 'URI user characters'),
      fromDomain: optionalText(entry, 'from_domain', HOSTNAME, 'a host name'),
    },
    codecs: entry.codecs === undefined ? null : parseCodecs(entry.codecs),
    register: entry.register === undefined ? null : parseRegister(entry.register, entry.auth),
    secure: false,
  };
}

function parseGateway(value: unknown, where: string): CarrierGateway {
  if (!isObject(value)) throw new CarriersFileError(`${where} must be an object`);
  unknownFields(value, GATEWAY_FIELDS, where);
  const host = value.host;
  if (typeof host !== 'string' || (isIP(host) === 0 && !HOSTNAME.test(host)))
    throw new CarriersFileError(`${where}.host must be an IP address or a host name`);
  const transport = value.transport ?? null;
  if (transport !== null && !TRANSPORTS.includes(transport as GatewayTransport))
    throw new CarriersFileError(`${where}.transport must be one of ${TRANSPORTS.join(', ')}`);
  return {
    host: host.toLowerCase(),
    port: value.port === undefined ? null : whole(value, 'port', 0, 1, 65535, where),
    transport: transport as GatewayTransport | null,
    priority: whole(value, 'priority', 0, 0, 65535, where),
    weight: whole(value, 'weight', 1, 0, 65535, where),
  };
}

function parseAuth(value: unknown): CarrierAuth {
  if (!isObject(value)) throw new CarriersFileError('auth must be an object');
  unknownFields(value, AUTH_FIELDS, 'auth');
  for (const field of ['username', 'password'])
    if (typeof value[field] !== 'string' || value[field] === '')
      throw new CarriersFileError(`auth.${field} must be a non-empty string`);
  if (value.realm !== undefined && typeof value.realm !== 'string')
    throw new CarriersFileError('auth.realm must be a string');
  return {
    username: value.username as string,
    password: value.password as string,
    realm: (value.realm as string | undefined) ?? null,
  };
}

/**
 * An outbound registration (carrier-registration.ts). The AOR's user is register.user, else
 * auth.username: one of them must be given. Credentials are the carrier's `auth`; without
 * them a registrar that challenges refuses the registration (logged at each attempt).
 */
function parseRegister(value: unknown, auth: unknown): CarrierRegister {
  if (!isObject(value)) throw new CarriersFileError('register must be an object');
  unknownFields(value, REGISTER_FIELDS, 'register');
  if (value.user === undefined && auth === undefined)
    throw new CarriersFileError('register.user must be given when the carrier has no auth');
  return {
    expires: whole(value, 'expires', 3600, 60, 86400, 'register'),
    user: optionalText(value, 'user', USER, 'URI user characters', 'register'),
    domain: optionalText(value, 'domain', HOSTNAME, 'a host name', 'register'),
  };
}

function parseCodecs(value: unknown): AudioCodec[] {
  const known = AUDIO_CODECS as readonly string[];
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((c) => typeof c === 'string' && known.includes(c))
  ) {
    throw new CarriersFileError(`codecs must be a non-empty array of ${AUDIO_CODECS.join(', ')}`);
  }
  return [...new Set(value as AudioCodec[])];
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unknownFields(value: Json, known: readonly string[], where: string): void {
  const unknown = Object.keys(value).find((key) => !known.includes(key));
  if (unknown !== undefined)
    throw new CarriersFileError(
      `${where} has an unknown field "${unknown}" (known: ${known.join(', ')})`,
    );
}

const field = (where: string | undefined, name: string) => (where ? `${where}.${name}` : name);

function text(value: Json, name: string, pattern: RegExp, rule: string): string {
  const raw = value[name];
  if (typeof raw !== 'string' || !pattern.test(raw))
    throw new CarriersFileError(`${name} must be ${rule}`);
  return raw;
}

function optionalText(
  value: Json,
  name: string,
  pattern: RegExp,
  rule: string,
  where?: string,
): string | null {
  const raw = value[name];
  if (raw === undefined) return null;
  if (typeof raw !== 'string' || !pattern.test(raw))
    throw new CarriersFileError(`${field(where, name)} must be a string of ${rule}`);
  return raw;
}

function whole(
  value: Json,
  name: string,
  fallback: number,
  min: number,
  max: number,
  where?: string,
): number {
  const raw = value[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > max)
    throw new CarriersFileError(
      `${field(where, name)} must be a whole number from ${min} to ${max}`,
    );
  return raw;
}
