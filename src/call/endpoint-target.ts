import { canonicalAddress, isInterfaceAddress, isWildcardAddress } from '../core/address-policy.js';
import type { Scheduler } from '../core/scheduler.js';
import { isSipUri, parseUri, type SipUri } from '../sip/message/index.js';
import type { Destination } from '../sip/transport/transport-layer.js';
import type { TransportProtocol } from '../sip/transport/flow.js';
import type { State } from '../state/state.js';
import type { BindingRecord, EndpointRecord } from '../state/records.js';
import { heldByConnection } from '../state/state.js';
import { liveBindings, liveTokenBindings } from './registrar-directory.js';

/** How one registered client is reached: its contact, and a route set or a flow. */
export interface Reach {
  target: string;
  destination?: Destination;
  routeSet?: string[];
}

/** Where a SIP URI destination is to be sent. */
export type ResolvedTarget =
  | (Reach & {
      kind: 'uri';
      /** A browser: it registered over WebSocket, so it takes WebRTC media alone. */
      webrtc?: boolean;
      /** The endpoint's SRTP policy, when it set one. */
      srtp?: 'required' | 'optional' | 'off' | 'dtls';
      /**
       * The user's other registrations to ring at once (tabs, devices), newest first: those of
       * the same media kind, reachable from this node.
       */
      others?: Reach[];
      /**
       * The user's registrations of the other media kind reachable from this node (a plain RTP
       * phone beside a browser, or a browser beside a phone), newest first: rung at once with
       * the others, each kind with its own offer.
       */
      otherKind?: Reach[];
    })
  /** The URI names one of our endpoints, and it has no live registration. */
  | { kind: 'unregistered' }
  /**
   * Every binding is held by a connection of another node (`node`, the newest's): only that
   * node can send on them, so from here the endpoint cannot be reached.
   */
  | { kind: 'elsewhere'; node: string; protocol: string };

/** What finding where a user of ours registered from needs. */
export interface TargetContext {
  state: State;
  scheduler: Scheduler;
  /** Hosts that name this gateway whatever the port: its public host (its SIP domain). */
  domains: readonly string[];
  /**
   * The addresses SIP listens on (0.0.0.0 or ::, every address of the machine) and its ports:
   * such an address names this gateway too in a URI with no port or one of these (RFC 3261
   * 16.4: a proxy knows the URIs of its own). Another port there is another server.
   */
  listening?: { addresses: readonly string[]; ports: readonly number[] };
  /** This node's id: only its own connections can be sent on. */
  node: string;
  /** Who calls: the token clients it registered are reachable by their subject. */
  owner?: { account: string; subaccount: string | null };
}

/**
 * The live bindings of the user a URI on our own domain names: an endpoint's, or those of a
 * token subject registered in the owner's account; null when the URI names neither.
 */
async function registeredBindings(
  uri: string,
  context: TargetContext,
): Promise<{ endpoint: EndpointRecord | null; bindings: BindingRecord[] } | null> {
  let parsed;
  try {
    parsed = parseUri(uri);
  } catch {
    return null;
  }
  if (!isSipUri(parsed) || parsed.user === null) return null;
  if (!namesThisGateway(parsed, context)) return null;
  const endpoint = await context.state.endpoints.findByUnique({
    space: 'sip_user',
    value: parsed.user,
  });
  const now = context.scheduler.now();
  if (endpoint) {
    return {
      endpoint,
      bindings: await liveBindings(context.state, endpoint.account, endpoint.endpoint_id, now),
    };
  }
  if (context.owner === undefined) return null;
  const bindings = await liveTokenBindings(context.state, context.owner, parsed.user, now);
  return bindings.length === 0 ? null : { endpoint: null, bindings };
}

/** Whether a SIP URI's host and port are this gateway's (see TargetContext). */
function namesThisGateway(uri: SipUri, context: TargetContext): boolean {
  if (context.domains.includes(uri.host.toLowerCase())) return true;
  const listening = context.listening;
  const address = canonicalAddress(uri.host);
  if (!listening || address === null) return false;
  if (uri.port !== null && !listening.ports.includes(uri.port)) return false;
  return listening.addresses.some((bound) =>
    isWildcardAddress(bound) ? isInterfaceAddress(address) : canonicalAddress(bound) === address,
  );
}

/**
 * A destination on the gateway's own domain whose user is an endpoint goes to where that
 * endpoint registered from: its live binding's contact, sent to the address and connection
 * the REGISTER came on (so NAT and WebSocket clients are reached), or through the proxies of
 * its Path when it registered through some (a load balancer in front of the nodes). With
 * several bindings (tabs, devices), the one made or refreshed last is the target and decides
 * the media kind (WebRTC for a browser), and the others of that kind ring with it;
 * those of the other kind come apart (`otherKind`), rung with an offer of their own. A
 * user that is no endpoint but the subject of an access token registered in the caller's
 * account (a browser or mobile SDK client, `sip:<sub>@<our host>`) is reached the same way.
 * Any other URI is dialled as it is.
 *
 * A connection id names a connection of the node that accepted it, and nothing else: a binding
 * held by another node's connection (TCP, TLS, WebSocket, with no Path) is not sent to from
 * `context.node`, whatever connection of its own has the same id; the user's other bindings
 * are rung without it. A WebSocket client cannot be dialled at all (RFC 7118), and a TCP or
 * TLS client's source port seldom listens.
 */
export async function resolveSipTarget(
  uri: string,
  context: TargetContext,
): Promise<ResolvedTarget> {
  const found = await registeredBindings(uri, context);
  if (found === null) return { kind: 'uri', target: uri };
  const { endpoint, bindings } = found;
  // A Contact that is no SIP URI (a tel: one) was bound, but cannot be called.
  const callable = bindings.filter((b) => parsedContact(b.contact) !== null);
  const reachable = callable.filter((b) => !heldByConnection(b) || b.node === context.node);
  const newest = reachable.at(-1);
  if (!newest) {
    const held = callable.at(-1);
    if (!held) return { kind: 'unregistered' };
    return { kind: 'elsewhere', node: held.node, protocol: held.protocol };
  }
  const webrtc = registeredBrowser(newest);
  // The client's other registrations (tabs, devices) ring with it, those of its media kind
  // (the offer is one for all), newest first.
  const older = reachable.slice(0, -1).reverse();
  const others = older.filter((b) => registeredBrowser(b) === webrtc).map(reachOf);
  const otherKind = older.filter((b) => registeredBrowser(b) !== webrtc).map(reachOf);
  return {
    kind: 'uri',
    ...reachOf(newest),
    ...(webrtc && { webrtc }),
    ...(endpoint?.srtp !== undefined && { srtp: endpoint.srtp }),
    ...(others.length > 0 && { others }),
    ...(otherKind.length > 0 && { otherKind }),
  };
}

/** Where one binding's client is reached: its contact, through its Path or on its flow. */
function reachOf(binding: BindingRecord): Reach {
  const target = binding.contact.replace(/^<|>$/g, '');
  // RFC 3327 5.3: the Path the client registered through becomes the route set of requests
  // to it, sent to the first proxy on it (the one that holds the client's flow), not to the
  // address the REGISTER came from.
  const path = binding.path ?? [];
  if (path.length > 0) return { target, routeSet: path };
  return {
    target,
    destination: {
      protocol: binding.protocol as TransportProtocol,
      address: { address: binding.address, port: binding.port },
      ...(binding.connection_id ? { connectionId: binding.connection_id } : {}),
    },
  };
}

/**
 * RFC 7118 5: a client on WebSocket registers a Contact with transport=ws (or wss); such
 * clients are browsers, whose media is WebRTC's (RFC 8827).
 */
function registeredBrowser(binding: BindingRecord): boolean {
  return /^WSS?$/i.test(binding.protocol) || /;transport=wss?(?=[;>]|$)/i.test(binding.contact);
}

/**
 * The connection of this node on which a client registered as `aor` with the Contact
 * `contact` (the remote target of a dialog with it) is reachable now: that of its live binding
 * with that Contact. A client that connected again (a browser after a network change, a
 * phone that lost its TCP connection) registered its new one; the old may linger half-open.
 * Null when no binding of the AOR has that Contact, or its binding is not held by a
 * connection of this node (through a Path, on another node, over UDP).
 */
export async function connectionOfContact(
  aor: string,
  contact: string,
  context: TargetContext,
): Promise<Destination | null> {
  const wanted = parsedContact(contact);
  if (wanted === null) return null;
  const found = await registeredBindings(aor, context);
  const binding = found?.bindings.findLast((b) => {
    const bound = parsedContact(b.contact);
    return bound !== null && sameContact(bound, wanted);
  });
  if (!binding?.connection_id || !heldByConnection(binding)) return null;
  if (binding.node !== context.node) return null;
  return {
    protocol: binding.protocol as TransportProtocol,
    address: { address: binding.address, port: binding.port },
    connectionId: binding.connection_id,
  };
}

/** A Contact as a SIP or SIPS URI (one an INVITE can be sent to), or null. */
function parsedContact(contact: string): SipUri | null {
  try {
    return parseUri(contact.trim().replace(/^<|>$/g, ''));
  } catch {
    return null;
  }
}

/** URI parameters that must match when either URI has them (RFC 3261 19.1.4). */
const DECIDING_PARAMS = ['transport', 'user', 'ttl', 'method', 'maddr'];

/**
 * Whether two Contacts name one client, by RFC 3261 19.1.4: scheme, user, host (any case) and
 * port; a parameter both carry with the same value (two installs behind NATs may share the
 * rest and differ in `rinstance`); transport, user, ttl, method and maddr the same when either
 * has them. A parameter one of them alone carries (`ob` in a REGISTER's) does not count.
 */
function sameContact(a: SipUri, b: SipUri): boolean {
  if (a.scheme !== b.scheme || a.user !== b.user || a.port !== b.port) return false;
  if (a.host.toLowerCase() !== b.host.toLowerCase()) return false;
  for (const [name, value] of a.params) {
    if (b.params.has(name) && b.params.get(name)?.toLowerCase() !== value?.toLowerCase()) {
      return false;
    }
  }
  return DECIDING_PARAMS.every((name) => a.params.has(name) === b.params.has(name));
}
