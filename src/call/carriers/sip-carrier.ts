import type { AudioCodec } from '../../sip/sdp/audio-codecs.js';

export type GatewayTransport = 'udp' | 'tcp' | 'tls';

/**
 * One server of a carrier. `port` and `transport` null: the host is located by RFC 3263
 * (NAPTR, SRV, then A/AAAA on the default port); an IP address or a port goes there directly.
 */
export interface CarrierGateway {
  host: string;
  port: number | null;
  transport: GatewayTransport | null;
  /** Lower is tried first (as in SRV, RFC 2782). */
  priority: number;
  /** Among gateways of one priority, the share of first tries. */
  weight: number;
}

/** What answers the carrier's digest challenges (RFC 3261 22.2); never logged. */
export interface CarrierAuth {
  username: string;
  password: string;
  /** Only challenges of this realm are answered; null answers any. */
  realm: string | null;
}

/** An outbound registration with the carrier (RFC 3261 10.2). */
export interface CarrierRegister {
  /** Seconds asked for in Expires; the registrar may grant fewer. */
  expires: number;
  /** The user registered (the AOR's user part); auth.username when unset. */
  user: string | null;
  /** The registrar's host (the AOR's domain); the first gateway's host when unset. */
  domain: string | null;
}

/** How the dialled number is written in the Request-URI and To. */
export interface NumberFormat {
  /** true: `+` then the digits; false: the digits alone; null: the number as dialled. */
  e164Plus: boolean | null;
  /** Put before the number (an account code some carriers route on), e.g. `1234#`. */
  techPrefix: string;
  /** The From URI's user part instead of the caller id; null keeps the caller id. */
  fromUser: string | null;
  /** The From URI's host instead of VOXGATE_PUBLIC_HOST. */
  fromDomain: string | null;
}

/** A SIP carrier that calls to phone numbers go out through. */
export interface SipCarrier {
  name: string;
  gateways: CarrierGateway[];
  auth: CarrierAuth | null;
  /** Destination digit prefixes (no `+`) this carrier takes; '' takes every number. */
  prefixes: string[];
  /** Among carriers matching with the same prefix length, lower is tried first. */
  priority: number;
  /** Among carriers of one priority, the share of first tries. */
  weight: number;
  format: NumberFormat;
  /** The audio codecs offered to this carrier, most preferred first; null: the default. */
  codecs: AudioCodec[] | null;
  register: CarrierRegister | null;
  /** A sips: URI (VOXGATE_CARRIER_URI): the Request-URI is sips and TLS is used. */
  secure: boolean;
}

/** Every carrier, and the timing of calls through them. */
export interface CarrierSettings {
  carriers: SipCarrier[];
  /** Where they came from, for messages: the setting's name, or none. */
  source: 'VOXGATE_CARRIER_URI' | 'VOXGATE_CARRIERS_FILE' | null;
  /** How long a gateway has to respond at all (a 100 Trying) before the next is tried. */
  responseTimeoutMs: number;
  /** How long a gateway may ring before the next is tried; 0: as long as the call waits. */
  answerTimeoutMs: number;
  /** Seconds between OPTIONS probes of the gateways (ms); 0: no probing. */
  probeIntervalMs: number;
}

export const NO_CARRIERS: CarrierSettings = {
  carriers: [],
  source: null,
  responseTimeoutMs: 4000,
  answerTimeoutMs: 0,
  probeIntervalMs: 0,
};

/** `host`, `host:port`, `[v6]:port`, with `;transport=` when one is named, for messages. */
export function gatewayName(gateway: CarrierGateway): string {
  const host = gateway.host.includes(':') ? `[${gateway.host}]` : gateway.host;
  const port = gateway.port === null ? '' : `:${gateway.port}`;
  return `${host}${port}${gateway.transport ? `;transport=${gateway.transport}` : ''}`;
}
