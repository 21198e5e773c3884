import type { Address, Flow } from './flow.js';

/** The parts of a Via header the routing rules read. */
export interface ViaLike {
  transport: string;
  host: string;
  port: number | null;
  params: ReadonlyMap<string, string | null>;
}

export type ResponseRoute =
  /** Send on the connection the request arrived on (reliable transports). */
  | { kind: 'connection'; connectionId: string; fallback: Address }
  /** Send a datagram, or open a connection, to this address. */
  | { kind: 'address'; address: Address };

const defaultPort = (transport: string): number =>
  transport.toUpperCase() === 'TLS' ? 5061 : 5060;

/**
 * RFC 3261 18.2.2 (with RFC 3581 4 for rport): where a response to a request goes, from the
 * top Via (as received, with received/rport already stamped) and the flow it came on.
 */
export function responseDestination(via: ViaLike, flow: Flow): ResponseRoute {
  const received = via.params.get('received') ?? null;
  const sentBy: Address = { address: via.host, port: via.port ?? defaultPort(via.transport) };
  if (flow.connectionId) {
    // RFC 3261 18.2.2: "If the "sent-protocol" is a reliable transport protocol ... the
    // response MUST be sent using the existing connection to the source of the original
    // request"; if that connection is gone, a new one to received (or sent-by) and its port.
    return {
      kind: 'connection',
      connectionId: flow.connectionId,
      fallback: { address: received ?? sentBy.address, port: sentBy.port },
    };
  }
  // The maddr case (multicast) is not supported: responses go unicast as below.
  const rport = via.params.get('rport');
  if (rport !== undefined && rport !== null && rport !== '') {
    // RFC 3581 4: send to the received address and the rport port.
    return {
      kind: 'address',
      address: { address: received ?? flow.remote.address, port: Number(rport) },
    };
  }
  // RFC 3261 18.2.2: "Otherwise, if the Via header field value contains a "received"
  // parameter, the response MUST be sent to the address in the "received" parameter, using
  // the port indicated in the "sent-by" value, or using port 5060 if none is specified".
  if (received) return { kind: 'address', address: { address: received, port: sentBy.port } };
  return { kind: 'address', address: sentBy };
}

/**
 * RFC 3261 18.2.1 and RFC 3581 4: what the server transport adds to the top Via of a request
 * it received. Returns the params to set (received and/or rport), or an empty map.
 */
export function receivedParams(via: ViaLike, source: Address): Map<string, string> {
  const out = new Map<string, string>();
  // "the server transport ... MUST add a "received" parameter" when sent-by's host differs
  // from the source address; RFC 3581 4: with rport present it MUST always add received.
  const hasRport = via.params.has('rport');
  if (via.host.replace(/^\[|\]$/g, '').toLowerCase() !== source.address.toLowerCase() || hasRport) {
    out.set('received', source.address);
  }
  // RFC 3581 4: an rport without a value is filled in with the source port.
  if (hasRport && !via.params.get('rport')) out.set('rport', String(source.port));
  return out;
}
