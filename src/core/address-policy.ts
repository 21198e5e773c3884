import { BlockList, isIP, SocketAddress } from 'node:net';
import { networkInterfaces } from 'node:os';
import { remembered } from './remembered.js';

/**
 * Where tenant-supplied URLs may lead (README, Outbound requests). `self-hosted` allows
 * loopback and private addresses (the client application usually runs beside the gateway);
 * `shared` refuses them too, for a gateway whose accounts are not all its operator's.
 */
export type OutboundProfile = 'self-hosted' | 'shared';

export const OUTBOUND_PROFILES: readonly OutboundProfile[] = ['self-hosted', 'shared'];

/** The rules an address can break, as logs and error messages name them. */
export type OutboundRule =
  'link-local' | 'unspecified' | 'multicast' | 'loopback' | 'private' | 'own-port';

export interface AddressPolicySettings {
  profile: OutboundProfile;
  /**
   * The gateway's own listening TCP ports (REST API, SIP over TCP, WebSocket and TLS): refused
   * on loopback, the unspecified address and the machine's own interface addresses, whatever
   * the profile.
   */
  ownPorts: readonly number[];
}

/** Why an address is refused: the rule and the range it fell in. */
export interface AddressRefusal {
  rule: OutboundRule;
  /** The address as checked (an IPv4-mapped IPv6 address as its IPv4 form). */
  address: string;
  /** The range that matched, such as 169.254.0.0/16, or `port 8080` for own-port. */
  range: string;
}

interface Range {
  rule: OutboundRule;
  cidr: string;
}

/** Refused whatever the profile. */
const ALWAYS: readonly Range[] = [
  { rule: 'link-local', cidr: '169.254.0.0/16' },
  { rule: 'link-local', cidr: 'fe80::/10' },
  // Connecting to 0.0.0.0 (or any of 0.0.0.0/8 on Linux) reaches this machine.
  { rule: 'unspecified', cidr: '0.0.0.0/8' },
  { rule: 'unspecified', cidr: '::/128' },
  { rule: 'multicast', cidr: '224.0.0.0/4' },
  { rule: 'multicast', cidr: '255.255.255.255/32' },
  { rule: 'multicast', cidr: 'ff00::/8' },
];

/** Refused in the shared profile. */
const SHARED_ONLY: readonly Range[] = [
  { rule: 'loopback', cidr: '127.0.0.0/8' },
  { rule: 'loopback', cidr: '::1/128' },
  { rule: 'private', cidr: '10.0.0.0/8' },
  { rule: 'private', cidr: '172.16.0.0/12' },
  { rule: 'private', cidr: '192.168.0.0/16' },
  // RFC 6598 shared address space (carrier-grade NAT), internal to a provider's network.
  { rule: 'private', cidr: '100.64.0.0/10' },
  { rule: 'private', cidr: 'fc00::/7' },
];

/** Addresses that are this machine whatever its interfaces. */
const SELF: readonly string[] = ['127.0.0.0/8', '::1/128', '0.0.0.0/8', '::/128'];

interface CompiledRange {
  rule: OutboundRule;
  cidr: string;
  list: BlockList;
}

function compile(ranges: readonly Range[]): CompiledRange[] {
  return ranges.map(({ rule, cidr }) => {
    const [network, bits] = cidr.split('/') as [string, string];
    const list = new BlockList();
    list.addSubnet(network, Number(bits), isIP(network) === 6 ? 'ipv6' : 'ipv4');
    return { rule, cidr, list };
  });
}

const COMPILED_ALWAYS = compile(ALWAYS);
const COMPILED_SHARED = compile(SHARED_ONLY);
const COMPILED_SELF = compile(SELF.map((cidr) => ({ rule: 'own-port', cidr })));

/**
 * Decides whether the gateway may connect to an address and port on a tenant's behalf. The
 * address is checked as connected to: an IPv4-mapped IPv6 address (::ffff:169.254.169.254)
 * as the IPv4 address it reaches.
 */
export class AddressPolicy {
  private readonly ranges: CompiledRange[];
  /**
   * What the ranges say of an address, remembered: a tenant's callbacks go to the same few
   * hosts again and again, and each BlockList check builds a SocketAddress.
   */
  private readonly judge = remembered((address: string): RangeVerdict => {
    const checked = canonicalAddress(address);
    if (checked === null)
      return {
        checked: address,
        refusal: { rule: 'unspecified', address, range: 'not an IP address' },
      };
    const target = new SocketAddress({
      address: checked,
      family: isIP(checked) === 6 ? 'ipv6' : 'ipv4',
    });
    for (const range of this.ranges) {
      if (range.list.check(target))
        return { checked, refusal: { rule: range.rule, address: checked, range: range.cidr } };
    }
    return {
      checked,
      refusal: null,
      self: COMPILED_SELF.some((range) => range.list.check(target)),
    };
  }, 1000);

  constructor(readonly settings: AddressPolicySettings) {
    this.ranges =
      settings.profile === 'shared' ? [...COMPILED_ALWAYS, ...COMPILED_SHARED] : COMPILED_ALWAYS;
  }

  /** null when allowed; otherwise the rule the address breaks. */
  refusal(address: string, port: number): AddressRefusal | null {
    const verdict = this.judge(address);
    if (verdict.refusal) return verdict.refusal;
    if (
      this.settings.ownPorts.includes(port) &&
      (verdict.self || isInterfaceAddress(verdict.checked))
    )
      return { rule: 'own-port', address: verdict.checked, range: `port ${port}` };
    return null;
  }
}

type RangeVerdict =
  { checked: string; refusal: AddressRefusal } | { checked: string; refusal: null; self: boolean };

/** An address of one of this machine's interfaces (they may change while it runs). */
export function isInterfaceAddress(address: string): boolean {
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (canonicalAddress(entry.address) === address) return true;
    }
  }
  return false;
}

/** The address a socket binds to listen on every interface: 0.0.0.0, or :: for IPv6 too. */
export function isWildcardAddress(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

/**
 * The address in the form the rules are written for: IPv4 dotted quad, or IPv6 in lower case
 * without a zone; an IPv4-mapped IPv6 address becomes its IPv4 address. null when not an IP.
 */
export function canonicalAddress(address: string): string | null {
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const kind = isIP(bare);
  if (kind === 4) return bare;
  if (kind !== 6) return null;
  const groups = ipv6Groups(bare);
  if (groups === null) return null;
  // RFC 4291 2.5.5.2: ::ffff:a.b.c.d reaches the IPv4 host a.b.c.d.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [high, low] = [groups[6]!, groups[7]!];
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  }
  return groups.map((g) => g.toString(16)).join(':');
}

/** The eight 16-bit groups of an IPv6 address (already known to be valid). */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((g) => parseInt(g, 16)) : [];
  const front = parse(head);
  const back = parse(tail);
  const missing = 8 - front.length - back.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return null;
  return [...front, ...new Array<number>(tail === undefined ? 0 : missing).fill(0), ...back];
}
