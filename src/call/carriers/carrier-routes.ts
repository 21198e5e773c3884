import { locateSipServers, srvOrder, type SipDns } from '../../sip/dialog/server-locator.js';
import { parseUri } from '../../sip/message/index.js';
import type { Destination } from '../../sip/transport/transport-layer.js';
import type { DialAttempt } from '../legs/outbound-leg.js';
import { gatewayName, type CarrierGateway, type SipCarrier } from './sip-carrier.js';

/** One INVITE to one server of one carrier's gateway. */
export interface CarrierAttempt extends DialAttempt {
  carrier: SipCarrier;
  gateway: CarrierGateway;
  /** `udp 192.0.2.7:5060`, for logs. */
  where: string;
}

/** Where a number goes: the attempts in order, and why carriers or gateways were left out. */
export interface NumberRoute {
  attempts: CarrierAttempt[];
  skipped: string[];
}

export interface CarrierRoutesOptions {
  carriers: readonly SipCarrier[];
  dns: SipDns;
  publicHost: string;
  /** Why a gateway is left out (its OPTIONS probes fail), or null when it is up. */
  downReason?: (carrier: SipCarrier, gateway: CarrierGateway) => string | null;
  /** Why a carrier with `register` is left out (not registered now), or null. */
  notRegistered?: (carrier: SipCarrier) => string | null;
  random?: () => number;
}

/**
 * Which carriers take a number, and in what order: the carriers whose longest matching prefix
 * is longest come first; among those, lower priority first and, within one priority, a
 * weighted random order (RFC 2782, as SRV). Each carrier's gateways follow the same order,
 * each located by RFC 3263 (an FQDN may give several servers, each an attempt).
 */
export class CarrierRoutes {
  constructor(private readonly options: CarrierRoutesOptions) {}

  /** The carriers that take `number` (`+` and digits, or digits), most preferred first. */
  carriersFor(number: string): SipCarrier[] {
    const digits = number.replace(/^\+/, '');
    const byLength = new Map<number, SipCarrier[]>();
    for (const carrier of this.options.carriers) {
      const matched = carrier.prefixes.filter((p) => digits.startsWith(p));
      if (matched.length === 0) continue;
      const length = Math.max(...matched.map((p) => p.length));
      byLength.set(length, [...(byLength.get(length) ?? []), carrier]);
    }
    return [...byLength.entries()]
      .sort(([a], [b]) => b - a)
      .flatMap(([, carriers]) => srvOrder(carriers, this.options.random));
  }

  /** Every attempt for a call to `number` from the caller id `caller`. */
  async route(number: string, caller: string): Promise<NumberRoute> {
    const skipped: string[] = [];
    const carriers = this.carriersFor(number);
    const perCarrier = await Promise.all(
      carriers.map(async (carrier) => {
        const unregistered = this.options.notRegistered?.(carrier) ?? null;
        if (unregistered !== null) {
          skipped.push(`carrier ${carrier.name} is not registered (${unregistered})`);
          return [];
        }
        const gateways = srvOrder(carrier.gateways, this.options.random);
        const located = await Promise.all(
          gateways.map((gateway) => this.attemptsAt(carrier, gateway, number, caller, skipped)),
        );
        return located.flat();
      }),
    );
    return { attempts: perCarrier.flat(), skipped };
  }

  private async attemptsAt(
    carrier: SipCarrier,
    gateway: CarrierGateway,
    number: string,
    caller: string,
    skipped: string[],
  ): Promise<CarrierAttempt[]> {
    const name = `carrier ${carrier.name} gateway ${gatewayName(gateway)}`;
    const down = this.options.downReason?.(carrier, gateway) ?? null;
    if (down !== null) {
      skipped.push(`${name} is down (${down})`);
      return [];
    }
    const target = gatewayUri(carrier, gateway, numberUser(carrier, number));
    let destinations: Destination[];
    try {
      destinations = await locateSipServers(parseUri(target), this.options.dns);
    } catch (error) {
      skipped.push(`${name} cannot be located: ${(error as Error).message}`);
      return [];
    }
    const { format } = carrier;
    const from = `sip:${escapeUser(format.fromUser ?? caller)}@${format.fromDomain ?? this.options.publicHost}`;
    return destinations.map((destination) => ({
      carrier,
      gateway,
      where: `${destination.protocol.toLowerCase()} ${hostPort(destination)}`,
      target,
      from,
      destination,
      ...(carrier.auth && { credentials: carrier.auth }),
      ...(carrier.codecs && { codecs: carrier.codecs }),
    }));
  }
}

/** The number as the carrier wants it in the Request-URI's user part. */
export function numberUser(carrier: SipCarrier, number: string): string {
  const { e164Plus, techPrefix } = carrier.format;
  const digits = number.replace(/^\+/, '');
  const written = e164Plus === null ? number : e164Plus ? `+${digits}` : digits;
  return escapeUser(techPrefix + written);
}

/** A SIP URI of the gateway for `user`: sips for a sips carrier, the transport as named. */
export function gatewayUri(carrier: SipCarrier, gateway: CarrierGateway, user?: string): string {
  const host = gateway.host.includes(':') ? `[${gateway.host}]` : gateway.host;
  const port = gateway.port === null ? '' : `:${gateway.port}`;
  const scheme = carrier.secure ? 'sips' : 'sip';
  const transport =
    gateway.transport && !(carrier.secure && gateway.transport === 'tls')
      ? `;transport=${gateway.transport}`
      : '';
  return `${scheme}:${user === undefined ? '' : `${user}@`}${host}${port}${transport}`;
}

/** RFC 3261 25.1: a user part keeps unreserved and user-unreserved characters, escapes others. */
function escapeUser(user: string): string {
  return user.replace(
    /[^A-Za-z0-9\-_.!~*'()&=+$,;?/]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
}

const hostPort = (d: Destination) =>
  `${d.address.address.includes(':') ? `[${d.address.address}]` : d.address.address}:${d.address.port}`;
