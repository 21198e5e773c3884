import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import {
  formatNameAddr,
  formatUri,
  isSipUri,
  parseAddressUri,
  parseNameAddr,
  type SipUri,
} from '../message/index.js';
import type { TransportProtocol } from '../transport/flow.js';
import type { Destination } from '../transport/transport-layer.js';

/** Turns a host name into an address (an IP literal never reaches it). */
export type HostResolver = (host: string) => Promise<string>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS A/AAAA). */
export const systemResolver: HostResolver = async (host) => (await lookup(host)).address;

/** Where a request inside a dialog is addressed: its Request-URI and Route values. */
export interface RequestTarget {
  uri: string;
  routes: string[];
}

/**
 * RFC 3261 12.2.1.1: the Request-URI and Route header of a request within a dialog, from the
 * remote target and the route set (each value a name-addr as Record-Route carried it).
 */
export function requestTarget(remoteTarget: string, routeSet: readonly string[]): RequestTarget {
  const first = routeSet[0];
  // "If the route set is empty, the UAC MUST place the remote target URI into the Request-URI.
  // The UAC MUST NOT add a Route header field to the request."
  if (first === undefined) return { uri: remoteTarget, routes: [] };
  const firstUri = routeUri(first);
  // "If the route set is not empty, and the first URI in the route set contains the lr
  // parameter, the UAC MUST place the remote target URI into the Request-URI and MUST include
  // a Route header field containing the route set values in order, including all parameters."
  if (isSipUri(firstUri) && firstUri.params.has('lr')) {
    return { uri: remoteTarget, routes: [...routeSet] };
  }
  // "If the route set is not empty, and its first URI does not contain the lr parameter, the
  // UAC MUST place the first URI from the route set into the Request-URI, stripping any
  // parameters that are not allowed in a Request-URI. The UAC MUST add a Route header field
  // containing the remainder of the route set values in order, including all parameters. The
  // UAC MUST then place the remote target URI into the Route header field as the last value."
  const remoteTargetUri = parseAddressUri(remoteTarget, 'remote target');
  return {
    uri: formatUri(requestUriOf(firstUri)),
    routes: [...routeSet.slice(1), formatNameAddr({ uri: remoteTargetUri })],
  };
}

/**
 * The URI a request within a dialog is sent to (RFC 3261 12.2.1.1 and 8.1.2): the first
 * route's, whether it loose-routes or not (a strict router's URI is the Request-URI), or the
 * remote target when the route set is empty.
 */
export function nextHopUri(remoteTarget: string, routeSet: readonly string[]): SipUri {
  const first = routeSet[0];
  const uri =
    first === undefined ? parseAddressUri(remoteTarget, 'remote target') : routeUri(first);
  if (!isSipUri(uri)) {
    throw new Error(`cannot send to a ${uri.scheme}: URI (${uri.raw}); only sip and sips route`);
  }
  return uri;
}

const TRANSPORTS: Readonly<Record<string, TransportProtocol>> = {
  udp: 'UDP',
  tcp: 'TCP',
  tls: 'TLS',
  ws: 'WS',
  wss: 'WSS',
};

/**
 * RFC 3263 4 without its DNS records (no NAPTR or SRV): the transport from the transport
 * parameter (sips: TLS, else UDP), the port from the URI (5061 for TLS and sips, else 5060),
 * and the host (or the maddr parameter, RFC 3261 8.1.2) as an address: an IP literal as it
 * is, a name through `resolve`.
 */
export async function resolveUri(uri: SipUri, resolve: HostResolver): Promise<Destination> {
  const transport = uri.params.get('transport')?.toLowerCase();
  let protocol: TransportProtocol;
  if (transport) {
    const known = TRANSPORTS[transport];
    if (!known) throw new Error(`unsupported transport=${transport} in ${uri.raw}`);
    protocol = uri.scheme === 'sips' && known === 'TCP' ? 'TLS' : known;
  } else {
    protocol = uri.scheme === 'sips' ? 'TLS' : 'UDP';
  }
  const secure = protocol === 'TLS' || protocol === 'WSS';
  const port = uri.port ?? (secure ? 5061 : 5060);
  const host = (uri.params.get('maddr') ?? uri.host).replace(/^\[|\]$/g, '');
  const address = isIP(host) !== 0 ? host : await resolve(host);
  return { protocol, address: { address, port } };
}

function routeUri(value: string) {
  return parseNameAddr(value, 'Route').uri;
}

/** RFC 3261 19.1.1 Table 1: neither the method parameter nor headers go in a Request-URI. */
function requestUriOf(uri: ReturnType<typeof routeUri>) {
  if (!isSipUri(uri)) return uri;
  const params = new Map(uri.params);
  params.delete('method');
  return { ...uri, params, headers: new Map<string, string>() };
}
