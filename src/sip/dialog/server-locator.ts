import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { SipUri } from '../message/index.js';
import type { TransportProtocol } from '../transport/flow.js';
import type { Destination } from '../transport/transport-layer.js';

export interface NaptrRecord {
  order: number;
  preference: number;
  flags: string;
  service: string;
  replacement: string;
}

/** The DNS records RFC 3263 reads; a name without records of the type gives []. */
export interface SipDns {
  naptr(name: string): Promise<NaptrRecord[]>;
  srv(name: string): Promise<{ priority: number; weight: number; port: number; name: string }[]>;
  addresses(name: string): Promise<string[]>;
}

/** No such name, or no records of that type: an empty answer, not a failure. */
const EMPTY = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'NOTFOUND', 'NODATA']);

async function orEmpty<T>(query: Promise<T[]>): Promise<T[]> {
  try {
    return await query;
  } catch (error) {
    if (EMPTY.has((error as NodeJS.ErrnoException).code ?? '')) return [];
    throw error;
  }
}

/**
 * DNS through node's resolver: the system's servers, or `servers` (host or host:port each,
 * VOXGATE_DNS_SERVERS) when given. A and AAAA are both asked; IPv4 addresses come first.
 */
export function systemSipDns(servers: readonly string[] = [], timeoutMs = 2000): SipDns {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return {
    naptr: async (name) =>
      (await orEmpty(resolver.resolveNaptr(name))).map((r) => ({
        order: r.order,
        preference: r.preference,
        flags: r.flags,
        service: r.service,
        replacement: r.replacement,
      })),
    srv: (name) => orEmpty(resolver.resolveSrv(name)),
    addresses: async (name) => {
      const [v4, v6] = await Promise.all([
        orEmpty(resolver.resolve4(name)),
        orEmpty(resolver.resolve6(name)),
      ]);
      return [...v4, ...v6];
    },
  };
}

/** RFC 3263 4.1: the NAPTR services and SRV prefixes of each transport we speak. */
const SERVICES: { naptr: string; srv: string; protocol: TransportProtocol; secure: boolean }[] = [
  { naptr: 'SIP+D2U', srv: '_sip._udp', protocol: 'UDP', secure: false },
  { naptr: 'SIP+D2T', srv: '_sip._tcp', protocol: 'TCP', secure: false },
  { naptr: 'SIPS+D2T', srv: '_sips._tcp', protocol: 'TLS', secure: true },
];

const TRANSPORT_PARAM: Readonly<Record<string, TransportProtocol>> = {
  udp: 'UDP',
  tcp: 'TCP',
  tls: 'TLS',
};

/** Why a URI could not be located: the message names the host and the step that failed. */
export class LocateError extends Error {}

/**
 * RFC 3263 section 4: the servers to try for a SIP URI, most preferred first, each as a
 * transport and an address.
 *
 * - An IP literal, or a host with an explicit port: that address (a name through A/AAAA),
 *   over the URI's transport parameter, else UDP (TLS for sips).
 * - Otherwise NAPTR on the host, keeping the services of transports we speak (only SIPS+D2T
 *   for a sips URI, and only the URI's transport when it names one), in order then
 *   preference; each replacement is an SRV name.
 * - No usable NAPTR: SRV for each transport in turn (UDP, TCP, TLS; the URI's only when it
 *   names one, _sips._tcp only for sips), the first that has records.
 * - SRV targets in RFC 2782 order: priority ascending, weighted random within a priority,
 *   each target's addresses through A/AAAA.
 * - No SRV either: the host's A/AAAA on the default port (5060, 5061 for TLS).
 */
export async function locateSipServers(uri: SipUri, dns: SipDns): Promise<Destination[]> {
  const host = (uri.params.get('maddr') ?? uri.host).replace(/^\[|\]$/g, '');
  const named = uri.params.get('transport')?.toLowerCase();
  const sips = uri.scheme === 'sips';
  let forced: TransportProtocol | undefined;
  if (named !== undefined) {
    forced = TRANSPORT_PARAM[named];
    if (!forced) throw new LocateError(`unsupported transport=${named} in ${uri.raw}`);
    if (sips && forced === 'UDP') throw new LocateError(`a sips URI cannot use UDP: ${uri.raw}`);
    if (sips) forced = 'TLS';
  }
  const plain: TransportProtocol = forced ?? (sips ? 'TLS' : 'UDP');
  const defaultPort = (p: TransportProtocol) => (p === 'TLS' ? 5061 : 5060);

  if (isIP(host) !== 0) {
    return [{ protocol: plain, address: { address: host, port: uri.port ?? defaultPort(plain) } }];
  }
  if (uri.port !== null) {
    return withAddresses(dns, host, plain, uri.port);
  }

  const usable = SERVICES.filter(
    (s) => (!sips || s.secure) && (forced === undefined || s.protocol === forced),
  );
  const naptr = (await dns.naptr(host))
    .filter((r) => r.flags.toLowerCase() === 's')
    .map((r) => ({ record: r, service: usable.find((s) => s.naptr === r.service.toUpperCase()) }))
    .filter((r) => r.service !== undefined)
    .sort((a, b) => a.record.order - b.record.order || a.record.preference - b.record.preference);
  const srvNames =
    naptr.length > 0
      ? naptr.map((r) => ({ name: r.record.replacement, protocol: r.service!.protocol }))
      : usable.map((s) => ({ name: `${s.srv}.${host}`, protocol: s.protocol }));

  for (const { name, protocol } of srvNames) {
    const records = await dns.srv(name);
    if (records.length === 0) continue;
    const found: Destination[] = [];
    for (const target of srvOrder(records)) {
      if (target.name === '.' || target.name === '') continue;
      found.push(...(await withAddresses(dns, target.name, protocol, target.port, true)));
    }
    if (found.length > 0) return found;
    // With NAPTR the first usable service decides; without, every transport is tried.
  }
  return withAddresses(dns, host, plain, defaultPort(plain));
}

async function withAddresses(
  dns: SipDns,
  name: string,
  protocol: TransportProtocol,
  port: number,
  quiet = false,
): Promise<Destination[]> {
  const addresses = await dns.addresses(name);
  if (addresses.length === 0 && !quiet) throw new LocateError(`${name} has no A or AAAA record`);
  return addresses.map((address) => ({ protocol, address: { address, port } }));
}

/**
 * RFC 2782: lowest priority first; within one priority, targets picked at random with
 * probability proportional to weight (zero-weight targets first in the running sum, so they
 * are chosen rarely but not never).
 */
export function srvOrder<T extends { priority: number; weight: number }>(
  records: readonly T[],
  random: () => number = Math.random,
): T[] {
  const priorities = [...new Set(records.map((r) => r.priority))].sort((a, b) => a - b);
  const ordered: T[] = [];
  for (const priority of priorities) {
    const left = records
      .filter((r) => r.priority === priority)
      .sort((a, b) => (a.weight === 0 ? -1 : 0) - (b.weight === 0 ? -1 : 0));
    while (left.length > 0) {
      const total = left.reduce((sum, r) => sum + r.weight, 0);
      // A whole number from 0 to the sum, inclusive.
      const pick = Math.floor(random() * (total + 1));
      let running = 0;
      let index = left.findIndex((r) => (running += r.weight) >= pick);
      if (index < 0) index = left.length - 1;
      ordered.push(left.splice(index, 1)[0]!);
    }
  }
  return ordered;
}
