import {
  SipParseError,
  SipRequest,
  SipResponse,
  claimsSip,
  parseMessage,
  rejectionStatus,
  validateRequest,
  validateResponse,
  type Via,
} from '../message/index.js';
import { isReliable, type Address, type Flow, type TransportProtocol } from './flow.js';
import { receivedParams, responseDestination, type ResponseRoute } from './response-destination.js';
import { rejectUnparsable } from './unparsable-request.js';

/** What the transport layer needs of one transport (UDP, TCP, TLS, WS, WSS). */
export interface TransportBinding {
  readonly protocol: TransportProtocol;
  /** The sent-by written into the Via of requests sent on it. */
  readonly sentBy: Address;
  send(data: Buffer, to: Address | { connectionId: string }): void | Promise<void>;
}

/** Where a request goes: an address over a protocol, or an existing connection. */
export interface Destination {
  protocol: TransportProtocol;
  address: Address;
  /** A connection to reuse (the flow a registration or dialog came on). */
  connectionId?: string;
}

export interface TransportLayerUser {
  onRequest(request: SipRequest, flow: Flow): void;
  onResponse(response: SipResponse, flow: Flow): void;
  /** A message was dropped or refused before reaching the transactions. */
  onDiscard?(reason: string, flow: Flow): void;
  /** Something that is not SIP at all came in (a scan, STUN, HTTP): dropped unanswered. */
  onNonSip?(flow: Flow): void;
  /**
   * A message the layer sent on its own account (a rejection of an unparsable request, a
   * response) could not be sent: the peer is gone. Told with no message contents.
   */
  onSendFailed?(what: string, peer: string, error: Error): void;
}

export type TraceDirection = 'in' | 'out';
export type TraceSink = (direction: TraceDirection, data: Buffer, peer: string) => void;

/**
 * RFC 3261 18: between the transports and the transactions. Inbound it parses and checks
 * each message, answers a SIP request that cannot be parsed (400 with the fault as its reason,
 * 505, 513, 416; see rejectUnparsable), drops what is not SIP at all unanswered, stamps received and rport on requests (18.2.1, RFC 3581) and drops responses whose
 * top Via is not ours (18.1.2). Outbound it sends responses where 18.2.2 says and requests
 * to a destination.
 */
export class TransportLayer {
  private readonly transports = new Map<TransportProtocol, TransportBinding>();
  /** Called with every message in and out while set (SIP tracing). */
  trace: TraceSink | null = null;

  constructor(private readonly user: TransportLayerUser) {}

  add(binding: TransportBinding): void {
    this.transports.set(binding.protocol, binding);
  }

  has(protocol: TransportProtocol): boolean {
    return this.transports.has(protocol);
  }

  /** The sent-by of our Via on a protocol. */
  sentBy(protocol: TransportProtocol): Address {
    return this.binding(protocol).sentBy;
  }

  /** Hands one message (a datagram, a framed stream message, a WebSocket message) in. */
  receive(data: Buffer, flow: Flow): void {
    this.trace?.('in', data, peerName(flow));
    let message: SipRequest | SipResponse | undefined;
    try {
      message = parseMessage(data, {
        streamed: flow.protocol === 'TCP' || flow.protocol === 'TLS',
      });
      if (message instanceof SipRequest) validateRequest(message);
      else validateResponse(message);
    } catch (error) {
      if (!(error instanceof SipParseError)) throw error;
      // Answering what is not SIP would make this port a reflector for any spoofed source.
      if (message === undefined && !claimsSip(error)) {
        this.user.onNonSip?.(flow);
        return;
      }
      this.user.onDiscard?.(error.reason, flow);
      if (rejectionStatus(error) !== null) {
        const answer = rejectUnparsable(error, flow, message?.headers, data.length);
        if (answer) {
          // The peer may already be gone (it sent garbage and reset the connection): a
          // failed send must be reported, never left as a rejection nothing observes.
          this.observe(
            this.sendTo(answer.route, answer.data, flow.protocol),
            `a ${rejectionStatus(error)} to an unparsable request`,
            flow.protocol,
            answer.route,
          );
        }
      }
      return;
    }
    if (message instanceof SipRequest) {
      const via = message.topVia();
      const stamp = receivedParams(via, flow.remote);
      if (stamp.size > 0) stampVia(message, via, stamp);
      this.user.onRequest(message, flow);
      return;
    }
    if (!this.isOurs(message.topVia())) {
      this.user.onDiscard?.('response whose top Via is not ours', flow);
      return;
    }
    this.user.onResponse(message, flow);
  }

  /** Sends a response to a request that arrived on `flow` (RFC 3261 18.2.2). */
  responseRoute(request: SipRequest, flow: Flow): ResponseRoute {
    return responseDestination(request.topVia(), flow);
  }

  /** Sends a response and reports, through onSendFailed, when it could not be sent. */
  sendResponse(response: SipResponse, route: ResponseRoute, protocol: TransportProtocol): void {
    const sent = this.sendTo(route, response.toBuffer(), protocol);
    this.observe(sent, `a ${response.status} response`, protocol, route);
  }

  /** Sends bytes along a response route; rejects when the transport fails. */
  sendTo(route: ResponseRoute, data: Buffer, protocol: TransportProtocol): void | Promise<void> {
    const binding = this.binding(protocol);
    if (route.kind === 'address') return this.emit(binding, data, route.address, route.address);
    const sent = this.emit(binding, data, { connectionId: route.connectionId }, route.fallback);
    // RFC 7118 4: a SIP WebSocket Server cannot open a connection to a client, so a closed
    // WebSocket connection has no fallback: its failure is the answer.
    if (sent instanceof Promise && !isWebSocket(protocol)) {
      // RFC 3261 18.2.2: when the connection is gone, open one to the fallback address.
      return sent.catch(() => this.emit(binding, data, route.fallback, route.fallback));
    }
    return sent;
  }

  sendRequest(data: Buffer, destination: Destination): void | Promise<void> {
    const binding = this.binding(destination.protocol);
    const to = destination.connectionId
      ? { connectionId: destination.connectionId }
      : destination.address;
    return this.emit(binding, data, to, destination.address);
  }

  /** True when a destination is reached over a reliable transport (no retransmissions). */
  static reliable(destination: Destination): boolean {
    return isReliable(destination.protocol);
  }

  private emit(
    binding: TransportBinding,
    data: Buffer,
    to: Address | { connectionId: string },
    peer: Address,
  ): void | Promise<void> {
    this.trace?.('out', data, `${binding.protocol} ${addressName(peer)}`);
    return binding.send(data, to);
  }

  /** Reports a send the layer made on its own account when it fails, so none goes unobserved. */
  private observe(
    sent: void | Promise<void>,
    what: string,
    protocol: TransportProtocol,
    route: ResponseRoute,
  ): void {
    if (!(sent instanceof Promise)) return;
    const peer = `${protocol} ${addressName(route.kind === 'address' ? route.address : route.fallback)}`;
    sent.catch((error: unknown) => {
      const failure = error instanceof Error ? error : new Error(String(error));
      this.user.onSendFailed?.(what, peer, failure);
    });
  }

  private binding(protocol: TransportProtocol): TransportBinding {
    const binding = this.transports.get(protocol);
    if (!binding) throw new Error(`no ${protocol} transport is listening`);
    return binding;
  }

  private isOurs(via: Via): boolean {
    const binding = this.transports.get(via.transport as TransportProtocol);
    if (!binding) return false;
    const port = via.port ?? (via.transport === 'TLS' || via.transport === 'WSS' ? 5061 : 5060);
    return (
      port === binding.sentBy.port &&
      via.host.replace(/^\[|\]$/g, '') === binding.sentBy.address.toLowerCase()
    );
  }
}

/** Writes received/rport into the top Via row (RFC 3261 18.2.1, RFC 3581 4). */
function stampVia(request: SipRequest, via: Via, stamp: Map<string, string>): void {
  const rows = request.headers.getRows('Via');
  const first = rows[0]!;
  // The top Via is the first value of the first row: rewrite it, keep any later values.
  const comma = topValueEnd(first);
  let value = first.slice(0, comma).trimEnd();
  const rport = stamp.get('rport');
  if (rport !== undefined) value = value.replace(/;\s*rport(?=\s*(;|$))/i, `;rport=${rport}`);
  const received = stamp.get('received');
  if (received !== undefined) {
    value = via.params.has('received')
      ? value.replace(/;\s*received\s*=\s*[^;]*/i, `;received=${received}`)
      : `${value};received=${received}`;
  }
  request.headers.set('Via', [value + first.slice(comma), ...rows.slice(1)]);
}

/** Where the first value of a Via row ends (its first comma outside quotes), or its length. */
function topValueEnd(row: string): number {
  let quoted = false;
  for (let i = 0; i < row.length; i++) {
    const c = row.charCodeAt(i);
    if (c === 0x22) quoted = !quoted;
    else if (c === 0x5c && quoted) i++;
    else if (c === 0x2c && !quoted) return i;
  }
  return row.length;
}

const isWebSocket = (protocol: TransportProtocol): boolean =>
  protocol === 'WS' || protocol === 'WSS';

const addressName = (a: Address): string =>
  a.address.includes(':') ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;

const peerName = (flow: Flow): string => `${flow.protocol} ${addressName(flow.remote)}`;
