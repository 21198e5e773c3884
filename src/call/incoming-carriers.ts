import { BlockList, isIP } from 'node:net';
import type { IncomingCarrierRecord } from '../state/records.js';
import type { State } from '../state/state.js';

/**
 * Who may send calls to a number: the IP set of the IncomingCarrier its `carrier` names.
 *
 * `VOXGATE_INBOUND_CARRIERS` (read by config.ts through readInboundCarrierMode):
 * - `enforce` (the default): an INVITE to a number is taken only from an address in the IP set
 *   of the number's IncomingCarrier, a number's `carrier` must name one of its account's
 *   IncomingCarriers, and anything else is refused 403;
 * - `open`: as before there were IncomingCarriers, any address may call any number, and a
 *   number's `carrier` is a free label (for development: `doctor` warns when SIP listens on a
 *   public address with it).
 */
export type InboundCarrierMode = 'enforce' | 'open';

export function readInboundCarrierMode(raw: string | undefined): InboundCarrierMode {
  if (raw === undefined || raw === '' || raw === 'enforce') return 'enforce';
  if (raw === 'open') return 'open';
  throw new RangeError('must be enforce or open');
}

/** Entries of an IP set at most, as stored and checked. */
export const MAX_IP_SET_ENTRIES = 100;

/**
 * The entries of an `ip_set` (comma-separated addresses and CIDR ranges, IPv4 or IPv6), each
 * normalised, or the problem with the first bad one, as a client is told it.
 */
export function parseIpSet(text: string): { entries: string[] } | { problem: string } {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) return { problem: 'must list at least one IP address or CIDR range' };
  if (entries.length > MAX_IP_SET_ENTRIES) {
    return { problem: `must list at most ${MAX_IP_SET_ENTRIES} addresses and ranges` };
  }
  for (const entry of entries) {
    if (cidrOf(entry) === null) {
      return { problem: `${entry} is not an IP address or a CIDR range (like 192.0.2.0/24)` };
    }
  }
  return { entries: [...new Set(entries)] };
}

/** An address or range as BlockList takes it, or null when it is neither. */
function cidrOf(
  entry: string,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const slash = entry.indexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const version = isIP(address);
  if (version === 0) return null;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const max = version === 4 ? 32 : 128;
  if (slash < 0) return { address, prefix: max, family };
  const prefix = entry.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return null;
  return { address, prefix: Number(prefix), family };
}

/** Whether `address` (where an INVITE came from) is in `entries`. */
export function ipSetHolds(entries: readonly string[], address: string): boolean {
  const list = new BlockList();
  for (const entry of entries) {
    const cidr = cidrOf(entry);
    if (cidr) list.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }
  // An IPv4 peer on a dual-stack socket shows as ::ffff:a.b.c.d.
  const plain = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  const version = isIP(plain);
  if (version === 0) return false;
  return list.check(plain, version === 4 ? 'ipv4' : 'ipv6');
}

/** Why a call from `source` to `number` (whose carrier is `carrierId`) is refused, or null. */
export async function carrierRefusal(
  state: State,
  number: { account: string; number: string; carrier: string },
  source: string,
): Promise<string | null> {
  const carrier: IncomingCarrierRecord | null = await state.incomingCarriers.get(
    number.account,
    number.carrier,
  );
  if (!carrier) {
    return `the number's carrier ${JSON.stringify(number.carrier)} is no IncomingCarrier of its account`;
  }
  if (!carrier.voice) return `IncomingCarrier ${carrier.carrier_id} does not carry voice`;
  if (ipSetHolds(carrier.ip_set, source)) return null;
  return `${source} is not in the IP set of IncomingCarrier ${carrier.carrier_id} (${carrier.name})`;
}
