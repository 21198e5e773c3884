import { isIP } from 'node:net';
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import type { Config } from '../config/config.js';
import { isWildcardAddress } from '../core/address-policy.js';
import { fail, ok, warn, type CheckResult } from './check-result.js';

export function isLoopback(host: string): boolean {
  const bare = host.toLowerCase().replace(/^::ffff:/, '');
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/**
 * The addresses other machines may reach SIP on: a wildcard bind listens on every interface
 * that is not loopback; a named address or host only on itself.
 */
function publicSipAddresses(
  sipHost: string,
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>,
): string[] {
  if (isLoopback(sipHost)) return [];
  if (!isWildcardAddress(sipHost)) return [sipHost];
  const family = sipHost === '::' ? null : 'IPv4';
  return Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .filter((i) => !i.internal && (family === null || i.family === family))
    .filter((i) => !i.address.toLowerCase().startsWith('fe80:'))
    .map((i) => i.address);
}

/**
 * VOXGATE_PUBLIC_HOST goes into SDP and Contact: peers send their audio and requests there.
 * A loopback address there while SIP listens where other machines reach it makes every call
 * from them one-way or dead.
 */
export function checkPublicHost(
  config: Config,
  publicHostSet: boolean,
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): CheckResult {
  const { publicHost, sipHost } = config;
  const name = 'public-host';
  if (isWildcardAddress(publicHost))
    return fail(
      name,
      `VOXGATE_PUBLIC_HOST is ${publicHost}, which no peer can send to: set it to the address ` +
        `peers reach this machine at`,
    );
  const reached = publicSipAddresses(sipHost, interfaces);
  const listens = `SIP listens on ${sipHost}${
    isWildcardAddress(sipHost) && reached.length > 0 ? ` (reachable at ${reached.join(', ')})` : ''
  }`;
  if (isLoopback(publicHost) && reached.length > 0) {
    return publicHostSet
      ? fail(
          name,
          `VOXGATE_PUBLIC_HOST is ${publicHost}, a loopback address, while ${listens}: peers ` +
            `elsewhere would send audio and requests to themselves; set VOXGATE_PUBLIC_HOST to ` +
            `the address they reach this machine at`,
        )
      : warn(
          name,
          `VOXGATE_PUBLIC_HOST is unset (so ${publicHost}) while ${listens}: calls with peers ` +
            `elsewhere get no audio; set VOXGATE_PUBLIC_HOST to the address they reach this ` +
            `machine at`,
        );
  }
  if (!isLoopback(publicHost) && reached.length === 0)
    return warn(
      name,
      `VOXGATE_PUBLIC_HOST is ${publicHost} but ${listens}, loopback only: peers elsewhere ` +
        `cannot reach it; set VOXGATE_SIP_HOST (or put a proxy on this machine in front)`,
    );
  if (isLoopback(publicHost))
    return ok(
      name,
      `VOXGATE_PUBLIC_HOST is ${publicHost} and ${listens}: peers on this machine (Firefox ` +
        `never sends WebRTC media to a loopback address: for Firefox here, set ` +
        `VOXGATE_PUBLIC_HOST to this machine's LAN address)`,
    );
  const kind = isIP(publicHost) === 0 ? 'host name' : 'address';
  return ok(name, `VOXGATE_PUBLIC_HOST is ${publicHost} (${kind}) and ${listens}`);
}
