import { randomHex } from '../../core/ids.js';
import type { Scheduler } from '../../core/scheduler.js';
import { SipRequest, type SipResponse } from '../message/index.js';
import { isReliable, type Flow } from '../transport/flow.js';
import type { ResponseRoute } from '../transport/response-destination.js';
import type { Destination, TransportLayer } from '../transport/transport-layer.js';
import { InviteClientTransaction } from './invite-client-transaction.js';
import { InviteServerTransaction } from './invite-server-transaction.js';
import { NonInviteClientTransaction } from './non-invite-client-transaction.js';
import { NonInviteServerTransaction } from './non-invite-server-transaction.js';
import { responseTo } from './response-to.js';
import { DEFAULT_TIMERS, type TimerSettings } from './timers.js';
import type { TransactionSender } from './transaction.js';
import { MAGIC_COOKIE, clientKey, mergeKey, serverKey } from './transaction-keys.js';
import { NO_METRICS, type SipMetrics } from './sip-metrics.js';

/** The transaction user (the UA core above): what the layer hands up. */
export interface TransactionUser {
  /** A new request, with the server transaction created for it (never an ACK). */
  onRequest(request: SipRequest, transaction: ServerTransaction): void;
  /** An ACK no server transaction matches: the ACK of a 2xx, for the dialog. */
  onAck(ack: SipRequest, flow: Flow): void;
  /** A CANCEL matched this INVITE transaction; the layer has answered the CANCEL 200. */
  onCancel(invite: ServerTransaction, cancel: SipRequest): void;
  /** A 2xx to an INVITE after its client transaction ended (a retransmission, a fork). */
  onStrayResponse?(response: SipResponse, flow: Flow): void;
}

export interface ClientTransactionUser {
  onResponse(response: SipResponse): void;
  onTimeout?(): void;
  onTransportError?(error: Error): void;
}

export interface TransactionLayerOptions {
  scheduler: Scheduler;
  timers?: TimerSettings;
  metrics?: SipMetrics;
}

type ServerMachine = InviteServerTransaction | NonInviteServerTransaction;
type ClientMachine = InviteClientTransaction<SipResponse> | NonInviteClientTransaction<SipResponse>;

/** A server transaction as the TU sees it: the request, where it came from, and respond(). */
export class ServerTransaction {
  /** The To tag of our responses, once one carried one (matched against RFC 2543 ACKs). */
  toTag: string | null = null;
  readonly method: string;
  /** @internal */ machine!: ServerMachine;
  #request: SipRequest | null;

  constructor(
    request: SipRequest,
    readonly flow: Flow,
    readonly route: ResponseRoute,
    private readonly layer: TransactionLayer,
  ) {
    this.method = request.method;
    this.#request = request;
  }

  /**
   * The request, until a final response is sent. The transaction lingers after that (32 s
   * for an INVITE's 2xx or a non-INVITE on UDP) only to absorb retransmissions, which its
   * machine answers from the bytes it sent; a parsed request is a few KB per call for that
   * long, so it is let go.
   */
  get request(): SipRequest {
    if (!this.#request) throw new Error(`the ${this.method} of an answered transaction is gone`);
    return this.#request;
  }

  get state(): string {
    return this.machine.state;
  }

  /** True once a final response has been sent. */
  get answered(): boolean {
    return this.machine.state !== 'proceeding' && this.machine.state !== 'trying';
  }

  /** Sends a response through the transaction (which retransmits it as RFC 3261 17.2 says). */
  respond(response: SipResponse): void {
    this.toTag ??= response.to().tag;
    this.layer.metrics.responseSent(this.method, response.status);
    this.machine.respond(response.status, response.toBuffer());
    if (response.status >= 200) this.#request = null;
  }
}

/**
 * A client transaction as the TU sees it. It keeps the request's method, not the request: a
 * transaction outlives its final response (Timer M, D or K), and the TU has the request.
 */
export class ClientTransaction {
  /** @internal */ machine!: ClientMachine;

  constructor(
    readonly method: string,
    readonly destination: Destination,
  ) {}

  get state(): string {
    return this.machine.state;
  }

  /**
   * Stops retransmitting and forgets the transaction: the TU has given up waiting (a timeout
   * of its own, shorter than Timer F). A late response is then a stray one, and dropped.
   */
  abandon(): void {
    this.machine.terminate();
  }
}

/**
 * RFC 3261 17: creates, matches and retires transactions. Requests are matched to server
 * transactions (17.2.3, with the RFC 2543 rules for branches without the magic cookie);
 * retransmissions and the ACK of a non-2xx stay inside them; CANCEL is answered and handed to
 * the TU with its INVITE; merged requests get 482 (8.2.2.2). Responses are matched to client
 * transactions (17.1.3).
 */
export class TransactionLayer {
  private readonly servers = new Map<string, ServerTransaction>();
  private readonly clients = new Map<string, ClientTransaction>();
  private readonly merged = new Map<string, string>();
  /** T1, T2 and T4, for the layers above that time things of their own (2xx retransmission). */
  readonly timers: TimerSettings;
  readonly scheduler: Scheduler;
  readonly metrics: SipMetrics;
  private user: TransactionUser | null = null;

  constructor(
    private readonly transport: TransportLayer,
    options: TransactionLayerOptions,
  ) {
    this.scheduler = options.scheduler;
    this.timers = options.timers ?? DEFAULT_TIMERS;
    this.metrics = options.metrics ?? NO_METRICS;
  }

  setUser(user: TransactionUser): void {
    this.user = user;
  }

  get liveServerTransactions(): number {
    return this.servers.size;
  }

  get liveClientTransactions(): number {
    return this.clients.size;
  }

  receiveRequest(request: SipRequest, flow: Flow): void {
    const user = this.requireUser();
    this.metrics.requestReceived(request.method);
    const key = serverKey(request);
    const existing = this.servers.get(key);
    if (request.method === 'ACK') {
      if (
        existing &&
        existing.machine instanceof InviteServerTransaction &&
        this.ackMatches(existing, request)
      ) {
        existing.machine.receiveAck();
      } else {
        user.onAck(request, flow);
      }
      return;
    }
    if (existing) {
      this.metrics.retransmissionReceived(request.method);
      existing.machine.receiveRequest();
      return;
    }
    const transaction = this.createServer(request, flow, key);
    const merge = mergeKey(request);
    if (merge !== null) {
      const first = this.merged.get(merge);
      if (first !== undefined && first !== key && this.servers.has(first)) {
        transaction.respond(responseTo(request, 482));
        return;
      }
      this.merged.set(merge, key);
    }
    if (request.method === 'INVITE') {
      // RFC 3261 17.2.1: 100 Trying at once, so the client stops retransmitting.
      transaction.respond(responseTo(request, 100));
    }
    if (request.method === 'CANCEL') {
      this.receiveCancel(request, transaction, user);
      return;
    }
    user.onRequest(request, transaction);
  }

  receiveResponse(response: SipResponse, flow: Flow): void {
    this.metrics.responseReceived(response.cseq().method, response.status);
    const key = clientKey(response);
    const transaction = key === null ? undefined : this.clients.get(key);
    if (transaction) {
      transaction.machine.receiveResponse(response.status, response);
      return;
    }
    // RFC 3261 17.1.1.2 / RFC 6026: a 2xx to an INVITE outside a transaction goes to the core.
    if (response.cseq().method === 'INVITE' && response.status >= 200 && response.status < 300) {
      this.user?.onStrayResponse?.(response, flow);
    }
  }

  /**
   * Sends a request in a new client transaction. A request without a Via gets ours with a
   * fresh branch; one that has a Via keeps it (a CANCEL carries its INVITE's, RFC 3261 9.1).
   */
  request(
    request: SipRequest,
    destination: Destination,
    user: ClientTransactionUser,
  ): ClientTransaction {
    if (request.method === 'ACK')
      throw new Error('an ACK is sent with sendAck, not in a transaction');
    if (!request.headers.has('Via')) this.addVia(request, destination);
    const key = clientKey(request)!;
    if (this.clients.has(key)) throw new Error(`a client transaction ${key} already exists`);
    const transaction = new ClientTransaction(request.method, destination);
    const data = request.toBuffer();
    const tu = {
      onResponse: (_status: number, response: SipResponse) => user.onResponse(response),
      onTimeout: () => user.onTimeout?.(),
      onTransportError: (error: Error) => user.onTransportError?.(error),
      onTerminated: () => this.clients.delete(key),
    };
    const options = this.options(destination, () => transaction.machine, request.method);
    transaction.machine =
      request.method === 'INVITE'
        ? new InviteClientTransaction(options, data, tu, ackBuilder(request))
        : new NonInviteClientTransaction(options, data, tu);
    this.clients.set(key, transaction);
    this.metrics.requestSent(request.method);
    transaction.machine.start();
    return transaction;
  }

  /** Sends an ACK for a 2xx (RFC 3261 13.2.2.4): outside any transaction, with a new branch. */
  sendAck(ack: SipRequest, destination: Destination): Buffer {
    if (!ack.headers.has('Via')) this.addVia(ack, destination);
    this.metrics.requestSent('ACK');
    const data = ack.toBuffer();
    void Promise.resolve(this.transport.sendRequest(data, destination)).catch(() => {});
    return data;
  }

  /** Sends the bytes of an ACK again, for a retransmitted 2xx. */
  resendAck(data: Buffer, destination: Destination): void {
    this.metrics.retransmissionSent('ACK');
    void Promise.resolve(this.transport.sendRequest(data, destination)).catch(() => {});
  }

  /** Resends bytes to a destination outside any transaction (the UAS's 2xx, 13.3.1.4). */
  resend(data: Buffer, route: ResponseRoute, flow: Flow): void {
    this.metrics.retransmissionSent('2xx');
    void Promise.resolve(this.transport.sendTo(route, data, flow.protocol)).catch(() => {});
  }

  /** Our Via for a request to this destination. */
  addVia(request: SipRequest, destination: Destination): void {
    const sentBy = this.transport.sentBy(destination.protocol);
    const host = sentBy.address.includes(':') ? `[${sentBy.address}]` : sentBy.address;
    request.headers.set(
      'Via',
      `SIP/2.0/${destination.protocol} ${host}:${sentBy.port};branch=${MAGIC_COOKIE}${randomHex(8)};rport`,
    );
  }

  /**
   * A WebSocket connection closed: the requests still waiting on it for a final response will
   * never get one, since a WebSocket client cannot be reached another way (RFC 7118 5.2). They
   * fail now as a transport error (RFC 3261 8.1.3.1) instead of at Timer B or F, 32 s on,
   * while a caller hears ringback from a browser that is gone.
   */
  connectionClosed(connectionId: string): void {
    for (const t of [...this.clients.values()]) {
      if (t.destination.connectionId !== connectionId) continue;
      if (t.state !== 'calling' && t.state !== 'trying' && t.state !== 'proceeding') continue;
      t.machine.transportFailed(new Error(`connection ${connectionId} closed`));
    }
  }

  /** Ends every transaction (shutdown). */
  close(): void {
    for (const t of [...this.servers.values()]) t.machine.terminate();
    for (const t of [...this.clients.values()]) t.machine.terminate();
  }

  private createServer(request: SipRequest, flow: Flow, key: string): ServerTransaction {
    const route = this.transport.responseRoute(request, flow);
    const transaction = new ServerTransaction(request, flow, route, this);
    const options = {
      scheduler: this.scheduler,
      reliable: isReliable(flow.protocol),
      timers: this.timers,
      sender: this.sender(
        (data) => this.transport.sendTo(route, data, flow.protocol),
        () => transaction.machine,
        request.method,
      ),
    };
    const merge = mergeKey(request);
    const tu = {
      onTerminated: () => {
        this.servers.delete(key);
        if (merge !== null && this.merged.get(merge) === key) this.merged.delete(merge);
      },
    };
    transaction.machine =
      request.method === 'INVITE'
        ? new InviteServerTransaction(options, tu)
        : new NonInviteServerTransaction(options, tu);
    this.servers.set(key, transaction);
    return transaction;
  }

  private receiveCancel(
    cancel: SipRequest,
    transaction: ServerTransaction,
    user: TransactionUser,
  ): void {
    // RFC 3261 9.2: the CANCEL is matched to its INVITE like an ACK would be. One that
    // matches is answered 200, even when the INVITE already had its final response: then it
    // changes nothing. One that matches no transaction is 481.
    const invite = this.servers.get(serverKey(cancel, true));
    if (!invite) {
      transaction.respond(responseTo(cancel, 481));
      return;
    }
    transaction.respond(responseTo(cancel, 200, { toTag: invite.toTag ?? undefined }));
    if (!invite.answered) user.onCancel(invite, cancel);
  }

  private ackMatches(invite: ServerTransaction, ack: SipRequest): boolean {
    // RFC 3261 17.2.3: without the magic cookie, the ACK's To tag must be that of our response.
    const branch = ack.topVia().branch;
    if (branch !== null && branch.startsWith(MAGIC_COOKIE)) return true;
    return invite.toTag === null || ack.to().tag === invite.toTag;
  }

  private options(destination: Destination, machine: () => ClientMachine, method: string) {
    return {
      scheduler: this.scheduler,
      reliable: isReliable(destination.protocol),
      timers: this.timers,
      sender: this.sender((data) => this.transport.sendRequest(data, destination), machine, method),
    };
  }

  /** Sends through the transport, counting repeats of the same bytes as retransmissions. */
  private sender(
    send: (data: Buffer) => void | Promise<void>,
    machine: () => ClientMachine | ServerMachine,
    method: string,
  ): TransactionSender {
    let last: Buffer | null = null;
    return {
      send: (data) => {
        if (data === last) this.metrics.retransmissionSent(method);
        last = data;
        const sent = send(data);
        if (sent instanceof Promise) sent.catch((error: Error) => machine().transportFailed(error));
      },
    };
  }

  private requireUser(): TransactionUser {
    if (!this.user) throw new Error('the transaction layer has no user');
    return this.user;
  }
}

/**
 * The INVITE transaction's ACK builder. Made out here so that the request is in this closure's
 * scope only: the TU callbacks made beside it would otherwise keep it as long as the
 * transaction lingers.
 */
function ackBuilder(invite: SipRequest): (response: SipResponse) => Buffer {
  return (response) => ackFor(invite, response).toBuffer();
}

/** RFC 3261 17.1.1.3: the ACK of a non-2xx final response, built from the INVITE. */
export function ackFor(invite: SipRequest, response: SipResponse): SipRequest {
  const rows: [string, string][] = [
    ['Via', invite.headers.getRows('Via')[0]!],
    ['Max-Forwards', '70'],
    ['From', invite.headers.get('From')!],
    ['To', response.headers.get('To')!],
    ['Call-ID', invite.headers.get('Call-ID')!],
    ['CSeq', `${invite.cseq().seq} ACK`],
  ];
  for (const route of invite.headers.getRows('Route')) rows.push(['Route', route]);
  return new SipRequest({ method: 'ACK', uri: invite.uri, headers: rows });
}
