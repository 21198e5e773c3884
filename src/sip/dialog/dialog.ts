import type { DigestCredentials } from '../auth/challenge-answer.js';
import { randomInt } from 'node:crypto';
import { SipRequest, detached, type SipMessage, type SipResponse } from '../message/index.js';
import type { ServerTransaction } from '../transaction/transaction-layer.js';
import { isReliable, type Flow } from '../transport/flow.js';
import type { Destination } from '../transport/transport-layer.js';
import type { DialogDelegate, DialogEnd } from './dialog-delegate.js';
import { dialogId } from './dialog-id.js';
import { requestTarget } from './next-hop.js';
import { SDP } from './session-body.js';

export type DialogState = 'early' | 'confirmed' | 'terminated';

/** Which side of the dialog-creating INVITE we were. */
export type DialogRole = 'uac' | 'uas';

const MOVES: Readonly<Record<DialogState, readonly DialogState[]>> = {
  early: ['confirmed', 'terminated'],
  confirmed: ['terminated'],
  terminated: [],
};

/** The headers and body of a request sent in a dialog. */
export interface DialogRequestOptions {
  headers?: Iterable<readonly [string, string]>;
  body?: string | Buffer;
  /** Required with a body, except on INVITE, UPDATE and ACK where it defaults to SDP. */
  contentType?: string;
  /** A new local target (our Contact) for a target refresh request, RFC 3261 12.2.1.1. */
  contact?: string;
}

/** How a dialog sends: the dialog layer gives each dialog it keeps one. */
export interface DialogChannel {
  request(dialog: Dialog, method: string, options: DialogRequestOptions): Promise<SipResponse>;
  bye(dialog: Dialog): Promise<SipResponse | null>;
  ended(dialog: Dialog, end: DialogEnd): void;
}

export interface DialogInit {
  role: DialogRole;
  state: 'early' | 'confirmed';
  callId: string;
  localTag: string;
  remoteTag: string;
  /** The From value of our requests in the dialog (the local URI with our tag). */
  localAddress: string;
  /** The To value of our requests in the dialog (the remote URI with the peer's tag). */
  remoteAddress: string;
  /** Our Contact URI. */
  localTarget: string;
  remoteTarget: string;
  /** Route values (name-addr), in the order requests carry them. */
  routeSet: readonly string[];
  localSeq: number | null;
  remoteSeq: number | null;
  secure: boolean;
  /** Where every request goes whatever the route set says (a connection, a NAT binding). */
  pinned: Destination | null;
}

/** Methods that refresh the remote target (RFC 3261 12.2, RFC 3311 5.1, RFC 6665 4.1.1.2). */
const TARGET_REFRESH = new Set(['INVITE', 'UPDATE', 'SUBSCRIBE', 'NOTIFY', 'REFER']);

/** Headers a dialog writes itself; options.headers may not set them. */
const DIALOG_HEADERS = new Set(['via', 'from', 'to', 'call-id', 'cseq', 'route', 'max-forwards']);

/**
 * The state of one dialog (RFC 3261 12): its id, the sequence numbers on each side, the
 * remote target and route set, and how requests in it are built and checked. Sending goes
 * through the dialog layer that keeps it.
 */
export class Dialog {
  readonly id: string;
  readonly role: DialogRole;
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  readonly localAddress: string;
  readonly remoteAddress: string;
  readonly secure: boolean;
  delegate: DialogDelegate = {};
  /** Our last SDP in the session (offer or answer), and the peer's. */
  localSdp: string | null = null;
  remoteSdp: string | null = null;
  /**
   * Answers a 401/407 to a request in this dialog (RFC 3261 22.2): the credentials its INVITE
   * was sent with, when it was.
   */
  credentials: DigestCredentials | null = null;
  /** @internal Offer/answer transactions under way, by method, for glare (RFC 3261 14). */
  readonly pendingOut = new Set<string>();
  /** @internal */ readonly pendingIn = new Map<string, ServerTransaction>();
  /** @internal The ACK sent for each INVITE CSeq (its bytes), resent on a 2xx retransmission. */
  readonly acks = new Map<number, Buffer>();
  /** @internal Set by the dialog layer. */ channel: DialogChannel | null = null;
  /** @internal Told before the delegate when the dialog ends (the INVITE that made it). */
  readonly whenEnded: ((end: DialogEnd) => void)[] = [];
  private current: DialogState;
  private localTargetUri: string;
  private remoteTargetUri: string;
  private routes: readonly string[];
  private localCSeq: number | null;
  private remoteCSeq: number | null;
  private pin: Destination | null;

  constructor(init: DialogInit) {
    // The values come from messages; copies keep the dialog from holding those messages.
    this.callId = detached(init.callId);
    this.localTag = detached(init.localTag);
    this.remoteTag = detached(init.remoteTag);
    this.id = dialogId(this.callId, this.localTag, this.remoteTag);
    this.role = init.role;
    this.current = init.state;
    this.localAddress = detached(init.localAddress);
    this.remoteAddress = detached(init.remoteAddress);
    this.localTargetUri = detached(init.localTarget);
    this.remoteTargetUri = detached(init.remoteTarget);
    this.routes = init.routeSet.map(detached);
    this.localCSeq = init.localSeq;
    this.remoteCSeq = init.remoteSeq;
    this.secure = init.secure;
    this.pin = init.pinned;
  }

  /**
   * RFC 3261 12.1.2: the UAC's dialog from a 1xx (with a To tag) or 2xx to its INVITE, sent
   * to `sentTo`. Over a connection the dialog keeps that destination.
   */
  static forUac(invite: SipRequest, response: SipResponse, sentTo: Destination): Dialog {
    // RFC 3261 12.1.2: "A UAC MUST be prepared to receive a response without a tag in the To
    // field, in which case the tag is considered to have a value of null" (an RFC 2543 UAS).
    const remoteTag = response.to().tag ?? '';
    return new Dialog({
      role: 'uac',
      state: response.status < 200 ? 'early' : 'confirmed',
      callId: invite.callId(),
      localTag: invite.from().tag ?? '',
      remoteTag,
      localAddress: invite.headers.get('From')!,
      remoteAddress: response.headers.get('To')!,
      localTarget: contactUri(invite) ?? invite.uri,
      // "The route set MUST be set to the list of URIs in the Record-Route header field from
      // the response, taken in reverse order and preserving all URI parameters."
      remoteTarget: contactUri(response) ?? invite.uri,
      routeSet: response.headers.getAll('Record-Route').reverse(),
      localSeq: invite.cseq().seq,
      remoteSeq: null,
      // "If the request was sent over TLS, and the Request-URI contained a SIPS URI, the
      // secure flag is set to TRUE."
      secure: isSecure(sentTo.protocol) && invite.requestUri().scheme === 'sips',
      pinned: isReliable(sentTo.protocol) ? sentTo : null,
    });
  }

  /**
   * RFC 3261 12.1.1: the UAS's dialog from a request and our 1xx or 2xx to it (which carries
   * our To tag and Contact). The dialog keeps sending on the flow the request came on.
   */
  static forUas(request: SipRequest, response: SipResponse, flow: Flow): Dialog {
    const localTag = response.to().tag;
    if (localTag === null) throw new Error('a response without a To tag creates no dialog');
    const remoteTarget = contactUri(request);
    if (remoteTarget === null) throw new Error('a request without a Contact creates no dialog');
    return new Dialog({
      role: 'uas',
      state: response.status < 200 ? 'early' : 'confirmed',
      callId: request.callId(),
      localTag,
      remoteTag: request.from().tag ?? '',
      localAddress: response.headers.get('To')!,
      remoteAddress: request.headers.get('From')!,
      localTarget: contactUri(response) ?? request.uri,
      remoteTarget,
      // "The route set MUST be set to the list of URIs in the Record-Route header field from
      // the request, taken in order and preserving all URI parameters."
      routeSet: request.headers.getAll('Record-Route'),
      localSeq: null,
      remoteSeq: request.cseq().seq,
      secure: isSecure(flow.protocol) && request.requestUri().scheme === 'sips',
      pinned: { protocol: flow.protocol, address: flow.remote, connectionId: flow.connectionId },
    });
  }

  get state(): DialogState {
    return this.current;
  }

  /** Where every request goes whatever the route set says (a connection, a NAT binding). */
  get pinned(): Destination | null {
    return this.pin;
  }

  /**
   * @internal A request of the dialog the peer sent on another connection of the protocol the
   * dialog is pinned to: the peer's requests now come on that one, so ours go there too (a
   * browser that reconnected after a network change, RFC 7118, has only its new connection; a
   * phone over TCP or TLS may open a new one). True when the dialog moved. A dialog pinned to
   * an address (UDP, or a connection we opened to the peer) stays where it is.
   */
  follow(flow: Flow): boolean {
    if (!flow.connectionId) return false;
    return this.repin({
      protocol: flow.protocol,
      address: flow.remote,
      connectionId: flow.connectionId,
    });
  }

  /**
   * @internal Moves a dialog pinned to a connection to another connection of its protocol (the
   * one the peer's registration is held on now); false, unchanged, for any other destination.
   */
  repin(to: Destination): boolean {
    const pin = this.pin;
    if (!pin?.connectionId || !to.connectionId || to.protocol !== pin.protocol) return false;
    if (to.connectionId === pin.connectionId) return false;
    this.pin = { protocol: to.protocol, address: to.address, connectionId: to.connectionId };
    return true;
  }

  get localTarget(): string {
    return this.localTargetUri;
  }

  get remoteTarget(): string {
    return this.remoteTargetUri;
  }

  get routeSet(): readonly string[] {
    return this.routes;
  }

  get localSeq(): number | null {
    return this.localCSeq;
  }

  get remoteSeq(): number | null {
    return this.remoteCSeq;
  }

  /**
   * The 2xx to the INVITE arrived (UAC) or was sent (UAS). RFC 3261 12.1.2: the UAC
   * recomputes the route set and remote target from the 2xx.
   */
  confirm(response?: SipResponse): void {
    if (this.current === 'confirmed') return;
    this.transition('confirmed');
    if (this.role === 'uac' && response) {
      this.routes = response.headers.getAll('Record-Route').reverse();
      this.refreshTarget(response);
    }
  }

  /**
   * RFC 3261 12.2.2: checks the CSeq of a request received in the dialog. False when it is
   * lower than the last one (the request MUST then be rejected with a 500); otherwise the
   * remote sequence number becomes the request's.
   */
  admit(request: SipRequest): boolean {
    if (request.method === 'ACK' || request.method === 'CANCEL') return true;
    const seq = request.cseq().seq;
    if (this.remoteCSeq !== null && seq < this.remoteCSeq) return false;
    this.remoteCSeq = seq;
    return true;
  }

  /**
   * RFC 3261 12.2.1.2 and 12.2.2: a target refresh request (received and accepted) or a 2xx
   * to ours replaces the remote target with its Contact, when it has one.
   */
  refreshTarget(message: SipRequest | SipResponse): void {
    const method = message instanceof SipRequest ? message.method : message.cseq().method;
    if (!TARGET_REFRESH.has(method)) return;
    const uri = contactUri(message);
    if (uri !== null) this.remoteTargetUri = detached(uri);
  }

  /** RFC 3261 12.2.1.1: a request in the dialog, with the next local CSeq. */
  createRequest(method: string, options: DialogRequestOptions = {}): SipRequest {
    if (method === 'ACK' || method === 'CANCEL') {
      throw new Error(`a ${method} takes its INVITE's CSeq: use createAck, or cancel the INVITE`);
    }
    // "If the local sequence number is empty, an initial value MUST be chosen"; otherwise
    // it "MUST be incremented by one" (8.1.1.5: below 2**31).
    const seq = this.localCSeq === null ? randomInt(1, 10_000) : this.localCSeq + 1;
    this.localCSeq = seq;
    if (options.contact !== undefined && TARGET_REFRESH.has(method)) {
      this.localTargetUri = options.contact;
    }
    const request = this.build(method, seq, options);
    if (TARGET_REFRESH.has(method) && !request.headers.has('Contact')) {
      request.headers.append('Contact', `<${this.localTargetUri}>`);
    }
    return request;
  }

  /**
   * RFC 3261 13.2.2.4: the ACK of a 2xx to `invite`, built like any request in the dialog but
   * with the INVITE's CSeq number and its credentials.
   */
  createAck(invite: SipRequest, options: DialogRequestOptions = {}): SipRequest {
    const ack = this.build('ACK', invite.cseq().seq, options);
    for (const name of ['Authorization', 'Proxy-Authorization']) {
      for (const row of invite.headers.getRows(name)) ack.headers.append(name, row);
    }
    return ack;
  }

  /** Sends a request in the dialog; resolves with its final response (408/503 synthesized). */
  request(method: string, options: DialogRequestOptions = {}): Promise<SipResponse> {
    return this.requireChannel().request(this, method, options);
  }

  /** A re-INVITE with a new offer; its 2xx is acknowledged. */
  reinvite(sdp: string, options: DialogRequestOptions = {}): Promise<SipResponse> {
    return this.request('INVITE', { ...options, body: sdp });
  }

  /** An UPDATE with a new offer (RFC 3311). */
  update(sdp: string, options: DialogRequestOptions = {}): Promise<SipResponse> {
    return this.request('UPDATE', { ...options, body: sdp });
  }

  /** An INFO (RFC 6086) with a body of a given type. */
  info(body: string, contentType: string): Promise<SipResponse> {
    return this.request('INFO', { body, contentType });
  }

  /**
   * Ends the dialog with a BYE (RFC 3261 15.1.1: the session is over as soon as it is sent).
   * Resolves with the BYE's response, or null when the dialog had already ended.
   */
  bye(): Promise<SipResponse | null> {
    return this.requireChannel().bye(this);
  }

  /** Ends the dialog and tells the owner why; later calls do nothing. */
  terminate(end: DialogEnd): void {
    if (this.current === 'terminated') return;
    this.transition('terminated');
    this.channel?.ended(this, end);
  }

  private build(method: string, seq: number, options: DialogRequestOptions): SipRequest {
    const target = requestTarget(this.remoteTargetUri, this.routes);
    const rows: [string, string][] = [
      ['Max-Forwards', '70'],
      ['From', this.localAddress],
      ['To', this.remoteAddress],
      ['Call-ID', this.callId],
      ['CSeq', `${seq} ${method}`],
    ];
    for (const route of target.routes) rows.push(['Route', route]);
    for (const [name, value] of options.headers ?? []) {
      if (DIALOG_HEADERS.has(name.toLowerCase())) {
        throw new TypeError(`Expected headers the dialog does not write but received ${name}`);
      }
      rows.push([name, value]);
    }
    const body = options.body;
    if (body !== undefined && body.length > 0) {
      const type = options.contentType ?? (SDP_METHODS.has(method) ? SDP : undefined);
      if (type === undefined) {
        throw new TypeError(`Expected a contentType for the body of a ${method}`);
      }
      rows.push(['Content-Type', type]);
    }
    return new SipRequest({ method, uri: target.uri, headers: rows, body });
  }

  private requireChannel(): DialogChannel {
    if (!this.channel) throw new Error('the dialog is not kept by a dialog layer');
    return this.channel;
  }

  private transition(to: DialogState): void {
    if (!MOVES[this.current].includes(to)) {
      throw new Error(`dialog ${this.id}: illegal state transition ${this.current} -> ${to}`);
    }
    this.current = to;
  }
}

const SDP_METHODS = new Set(['INVITE', 'UPDATE', 'ACK', 'PRACK']);

const isSecure = (protocol: string): boolean => protocol === 'TLS' || protocol === 'WSS';

/** The URI of a message's first Contact, as written; null when there is none. */
export function contactUri(message: SipMessage): string | null {
  const contacts = message.contact();
  if (contacts === '*' || contacts.length === 0) return null;
  return contacts[0]!.uri.raw;
}
