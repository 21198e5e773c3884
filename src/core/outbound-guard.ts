import { promises as dns, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import {
  AddressPolicy,
  canonicalAddress,
  type AddressPolicySettings,
  type AddressRefusal,
} from './address-policy.js';

/** Every address a host name resolves to, in the order a connection would try them. */
export type HostResolver = (host: string) => Promise<LookupAddress[]>;

export const systemResolver: HostResolver = (host) =>
  dns.lookup(host, { all: true, verbatim: true });

/**
 * A resolver that answers the names of a table and asks `fallback` for the others (tests give
 * the gateway names it cannot look up in DNS). The table is read at each lookup, so a test can
 * change a name's answer between two uses, as a rebinding DNS server would.
 */
export function tableResolver(
  table: Readonly<Record<string, readonly string[]>>,
  fallback: HostResolver = systemResolver,
): HostResolver {
  return async (host) => {
    const name = host.toLowerCase().replace(/\.$/, '');
    const listed = Object.entries(table).find(([key]) => key.toLowerCase() === name)?.[1];
    if (!listed) return fallback(host);
    return listed.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
  };
}

const DEFAULT_PORTS: Record<string, number> = {
  'http:': 80,
  'https:': 443,
  'ws:': 80,
  'wss:': 443,
};

const RULE_TEXT: Record<AddressRefusal['rule'], string> = {
  'link-local': 'a link-local address',
  unspecified: 'an unspecified (this-host) address',
  multicast: 'a multicast or broadcast address',
  loopback: 'a loopback address',
  private: 'a private address',
  'own-port': "one of the gateway's own listening ports",
};

/** A URL the outbound policy refuses; the message names the host, the address and the rule. */
export class OutboundRefused extends Error {
  constructor(
    readonly refusal: AddressRefusal,
    /** The host as the URL names it. */
    readonly host: string,
    readonly port: number,
  ) {
    const literal = canonicalAddress(host) === refusal.address;
    const where = refusal.rule === 'own-port' ? `${refusal.address} port ${port}` : refusal.address;
    const what = `${RULE_TEXT[refusal.rule]}${refusal.rule === 'own-port' ? '' : ` (${refusal.range})`}`;
    const profile =
      refusal.rule === 'loopback' || refusal.rule === 'private' ? ' of the shared profile' : '';
    super(
      `${literal ? `${where} is ${what}` : `${host} resolves to ${where}, ${what}`}: refused by the outbound rule ${refusal.rule}${profile}`,
    );
    this.name = 'OutboundRefused';
  }

  get rule(): AddressRefusal['rule'] {
    return this.refusal.rule;
  }
}

/** A URL checked and bound to the one address the connection must go to. */
export interface PinnedTarget {
  url: URL;
  /** The host as the URL names it: Host header and TLS server name stay this. */
  host: string;
  port: number;
  address: string;
  family: 4 | 6;
  /**
   * For http(s).request, net.connect and ws: answers the checked address and nothing else,
   * so no second DNS lookup can lead the connection elsewhere.
   */
  lookup: LookupFunction;
}

export interface OutboundGuardOptions {
  policy: AddressPolicySettings;
  resolve?: HostResolver;
  /** Told of every refusal, once (the gateway logs it with the rule). */
  onRefused?(refused: OutboundRefused, url: URL): void;
}

/** How long a check made while answering a REST request waits for DNS before letting it be. */
const REQUEST_CHECK_TIMEOUT_MS = 2000;

/**
 * The one way to a tenant-supplied URL (README, Outbound requests): its host is resolved once,
 * every address it resolves to is checked against the policy, and the connection goes to the
 * checked address. A redirect is a new URL and goes through pin() again (guarded-http.ts).
 */
export class OutboundGuard {
  private readonly policy: AddressPolicy;
  private readonly resolve: HostResolver;

  constructor(private readonly options: OutboundGuardOptions) {
    this.policy = new AddressPolicy(options.policy);
    this.resolve = options.resolve ?? systemResolver;
  }

  get settings(): AddressPolicySettings {
    return this.policy.settings;
  }

  /**
   * Resolves and checks a URL's host. Throws OutboundRefused when any address it resolves to
   * is refused, a TypeError for a URL that is not http, https, ws or wss, and the resolver's
   * error (ENOTFOUND...) when the host does not resolve. A refusal is reported to
   * `onRefused` unless `report` is false.
   */
  async pin(input: URL | string, report = true): Promise<PinnedTarget> {
    const url = typeof input === 'string' ? new URL(input) : input;
    const port = portOf(url);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const addresses = isIP(host)
      ? [{ address: host, family: isIP(host) }]
      : await this.lookup(host);
    for (const { address } of addresses) {
      const refusal = this.policy.refusal(address, port);
      if (refusal) {
        const refused = new OutboundRefused(refusal, host, port);
        throw report ? this.refused(refused, url) : refused;
      }
    }
    const [first] = addresses as [LookupAddress];
    const family = first.family === 6 ? 6 : 4;
    const address = first.address;
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all)
        (callback as (e: null, a: LookupAddress[]) => void)(null, [{ address, family }]);
      else callback(null, address, family);
    };
    return { url, host, port, address, family, lookup };
  }

  /**
   * The check made when a URL arrives in a REST request: the refusal, or null when the URL is
   * allowed or cannot be judged yet (its host does not resolve now, or not within 2 s); such
   * a URL is checked again when it is used.
   */
  async refusalOf(input: string): Promise<OutboundRefused | null> {
    let url: URL;
    try {
      url = new URL(input);
      portOf(url);
    } catch {
      return null; // the caller's own format check reports it
    }
    const judged = (error: unknown) => (error instanceof OutboundRefused ? error : null);
    // An address needs no lookup: judged at once, without a timer.
    if (isIP(url.hostname.replace(/^\[(.*)\]$/, '$1')))
      return this.pin(url).then(() => null, judged);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), REQUEST_CHECK_TIMEOUT_MS);
    });
    try {
      const checked = this.pin(url).then(() => null, judged);
      return await Promise.race([checked, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async lookup(host: string): Promise<LookupAddress[]> {
    const addresses = await this.resolve(host);
    if (addresses.length === 0)
      throw Object.assign(new Error(`${host} resolves to no address`), { code: 'ENOTFOUND' });
    return addresses;
  }

  /**
   * Tells of a refusal that pin() was asked not to report, with the URL it stopped (a
   * connection pool checks an origin, its caller knows the whole URL).
   */
  refused(refused: OutboundRefused, url: URL): OutboundRefused {
    this.options.onRefused?.(refused, url);
    return refused;
  }
}

/** What a guard is built from in another thread (a media worker): structured-cloneable. */
export interface OutboundGuardSettings {
  policy: AddressPolicySettings;
  /** Names answered from this table instead of DNS (tests). */
  hosts?: Record<string, string[]>;
}

export function guardFromSettings(
  settings: OutboundGuardSettings | undefined,
  onRefused?: OutboundGuardOptions['onRefused'],
): OutboundGuard {
  if (!settings) return selfHostedGuard();
  return new OutboundGuard({
    policy: settings.policy,
    ...(settings.hosts ? { resolve: tableResolver(settings.hosts) } : {}),
    ...(onRefused ? { onRefused } : {}),
  });
}

/**
 * The guard of the default profile, knowing none of the gateway's ports: for a component built
 * on its own (tests, benchmarks); the gateway gives each component its configured guard.
 */
export function selfHostedGuard(): OutboundGuard {
  return new OutboundGuard({ policy: { profile: 'self-hosted', ownPorts: [] } });
}

function portOf(url: URL): number {
  const fallback = DEFAULT_PORTS[url.protocol];
  if (fallback === undefined)
    throw new TypeError(
      `Expected an http, https, ws or wss URL but received the scheme ${url.protocol}`,
    );
  return url.port === '' ? fallback : Number(url.port);
}

/** The URL as a log line may show it: no credentials, no query (it may carry a secret). */
export function redactedUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}
