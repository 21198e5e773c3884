import { KeyedTurns } from '../../core/keyed-turns.js';
import type { Scheduler } from '../../core/scheduler.js';
import { SipHeaders, headerKey, type SipRequest, type SipResponse } from '../message/index.js';
import { responseTo } from '../transaction/response-to.js';
import type { TimerSettings } from '../transaction/timers.js';
import type {
  ClientTransaction,
  ClientTransactionUser,
  ServerTransaction,
  TransactionLayer,
} from '../transaction/transaction-layer.js';
import type { Flow } from '../transport/flow.js';
import type { Destination } from '../transport/transport-layer.js';
import type { DialogRouter, UserAgentCore } from '../ua/user-agent-core.js';
import { AnswerRetransmitter } from './answer-retransmitter.js';
import type { Dialog, DialogChannel, DialogRequestOptions } from './dialog.js';
import type { DialogEnd } from './dialog-delegate.js';
import { idOfReceivedRequest, idOfResponse } from './dialog-id.js';
import { requestInDialog, sendBye } from './in-dialog-client.js';
import { serveInDialog } from './in-dialog-server.js';
import { nextHopUri, resolveUri, systemResolver, type HostResolver } from './next-hop.js';

/** The parts of the SIP stack the dialog layer sits on (a SipStack has them). */
export interface DialogStack {
  readonly core: UserAgentCore;
  readonly transactions: TransactionLayer;
  /** Runs a hook as the stack closes (the layer then ends its dialogs). */
  onClose?(hook: () => void): void;
}

export interface DialogLayerOptions {
  /** Resolves host names in remote targets and routes (default: the system resolver). */
  resolve?: HostResolver;
  /** Told of a delegate that threw, and other faults that lose nothing but a message. */
  onWarning?: (message: string) => void;
}

/** Callbacks of a 2xx to an INVITE we answered, waiting for its ACK. */
export interface AckWaitHooks {
  onAck?(ack: SipRequest): void;
  /** 64*T1 passed without an ACK; the layer sends a BYE after this. */
  onGiveUp?(): void;
}

interface AckWait {
  retransmitter: AnswerRetransmitter;
  hooks: AckWaitHooks;
  /** Run once the wait is over (a BYE the owner asked for meanwhile, RFC 3261 15). */
  after: (() => void)[];
}

/**
 * The dialogs of a UA (RFC 3261 12-15): it keeps them by id, routes the requests, ACKs and
 * stray 2xx the UA core hands it, answers in-dialog requests (through in-dialog-server), sends
 * the requests a dialog's owner asks for, and retransmits each 2xx to an INVITE until its ACK.
 */
export class DialogLayer implements DialogRouter {
  private readonly dialogs = new Map<string, Dialog>();
  private readonly ackWaits = new Map<Dialog, Map<number, AckWait>>();
  private readonly cancelWatch = new Map<ServerTransaction, (cancel: SipRequest) => void>();
  /** Ended dialogs with ACKs, kept 64*T1 to answer a late 2xx retransmission again. */
  private readonly lingering = new Map<string, Dialog>();
  private readonly channel: DialogChannel;
  readonly scheduler: Scheduler;
  readonly timers: TimerSettings;
  private readonly resolver: HostResolver;
  /** Where the peers of dialogs are now, looked up in turn for each dialog. */
  private readonly lookups = new KeyedTurns();

  constructor(
    readonly stack: DialogStack,
    private readonly options: DialogLayerOptions = {},
  ) {
    // The stack's own clock and timers: 2xx retransmissions run on them.
    this.scheduler = stack.transactions.scheduler;
    this.timers = stack.transactions.timers;
    this.resolver = options.resolve ?? systemResolver;
    this.channel = {
      request: (dialog, method, requestOptions) =>
        requestInDialog(this, dialog, method, requestOptions),
      bye: (dialog) => this.bye(dialog),
      ended: (dialog, end) => this.ended(dialog, end),
    };
    stack.core.setDialogRouter(this);
    stack.onClose?.(() => this.close());
  }

  get size(): number {
    return this.dialogs.size;
  }

  /** Starts keeping a dialog (an early one, or confirmed). */
  add(dialog: Dialog): void {
    const known = this.dialogs.get(dialog.id);
    if (known && known !== dialog) throw new Error(`a dialog ${dialog.id} already exists`);
    dialog.channel = this.channel;
    this.dialogs.set(dialog.id, dialog);
  }

  get(id: string): Dialog | undefined {
    return this.dialogs.get(id);
  }

  /** The methods the UA accepts, for Allow. */
  allowed(): string[] {
    return this.stack.core.allowed();
  }

  // --- DialogRouter: what the UA core hands down ---

  onInDialogRequest(request: SipRequest, transaction: ServerTransaction): boolean {
    const dialog = this.dialogs.get(idOfReceivedRequest(request));
    if (!dialog) return false;
    serveInDialog(this, dialog, request, transaction);
    return true;
  }

  onAck(ack: SipRequest, _flow: Flow): void {
    const dialog = this.dialogs.get(idOfReceivedRequest(ack));
    if (!dialog) return; // RFC 3261 17: an ACK is never answered; one for no dialog is dropped
    const waits = this.ackWaits.get(dialog);
    const wait = waits?.get(ack.cseq().seq);
    if (!wait) return; // a retransmitted ACK
    this.endWait(dialog, ack.cseq().seq);
    this.safely(() => wait.hooks.onAck?.(ack));
    this.safely(() => dialog.delegate.onAck?.(ack));
    for (const run of wait.after) run();
  }

  onCancel(invite: ServerTransaction, cancel: SipRequest): void {
    const watcher = this.cancelWatch.get(invite);
    if (watcher) {
      this.cancelWatch.delete(invite);
      watcher(cancel);
      return;
    }
    // RFC 3261 9.2: the UAS "SHOULD respond to the INVITE with a 487".
    if (!invite.answered) invite.respond(responseTo(invite.request, 487));
  }

  onStrayResponse(response: SipResponse, _flow: Flow): void {
    // RFC 3261 13.2.2.4: a retransmission of a 2xx we acknowledged gets the same ACK again.
    const id = idOfResponse(response);
    const dialog = this.dialogs.get(id) ?? this.lingering.get(id);
    const ack = dialog?.acks.get(response.cseq().seq);
    if (dialog && ack) this.resendAck(dialog, ack);
  }

  // --- for the user agents above ---

  /** Calls `handler` (instead of answering 487) when a CANCEL matches this INVITE. */
  watchCancel(invite: ServerTransaction, handler: (cancel: SipRequest) => void): void {
    this.cancelWatch.set(invite, handler);
  }

  unwatchCancel(invite: ServerTransaction): void {
    this.cancelWatch.delete(invite);
  }

  /**
   * Where a request in this dialog, or to this URI through an optional pre-loaded route set,
   * goes (RFC 3263 without DNS records, see resolveUri).
   */
  async destinationOf(
    target: Dialog | string,
    routeSet: readonly string[] = [],
  ): Promise<Destination> {
    if (typeof target !== 'string') {
      if (target.pinned) return target.pinned;
      return resolveUri(nextHopUri(target.remoteTarget, target.routeSet), this.resolver);
    }
    return resolveUri(nextHopUri(target, routeSet), this.resolver);
  }

  /**
   * Where our next request in a dialog goes: first, for a dialog pinned to a connection, the
   * connection its owner says the peer is reachable on now (DialogDelegate.reachableAt).
   */
  async requestDestination(
    dialog: Dialog,
    reach = dialog.delegate.reachableAt,
  ): Promise<Destination> {
    const ask = dialog.pinned?.connectionId ? reach : undefined;
    if (!ask) return this.destinationOf(dialog);
    // In turn for one dialog: requests leave in the order of their CSeq numbers.
    return this.lookups.run(dialog.id, async () => {
      const now = await ask().catch((error: Error) => {
        this.warn(`could not look up where the dialog's peer is now: ${error.message}`);
        return null;
      });
      if (now) dialog.repin(now);
      return this.destinationOf(dialog);
    });
  }

  /** Sends a request in a new client transaction, with our Via as its first header. */
  sendRequest(
    request: SipRequest,
    destination: Destination,
    user: ClientTransactionUser,
  ): ClientTransaction {
    if (!request.headers.has('Via')) this.placeVia(request, destination);
    return this.stack.transactions.request(request, destination, user);
  }

  /** RFC 3261 13.2.2.4: ACKs a 2xx to an INVITE of the dialog, and keeps the ACK to resend. */
  acknowledge(dialog: Dialog, invite: SipRequest, options: DialogRequestOptions = {}): void {
    const seq = invite.cseq().seq;
    const ack = dialog.createAck(invite, options);
    dialog.acks.clear(); // only the latest INVITE's 2xx can still be retransmitted to us
    this.destinationOf(dialog).then(
      (to) => {
        if (!ack.headers.has('Via')) this.placeVia(ack, to);
        // Kept as the bytes sent: a dialog keeps its ACK as long as it lingers (64*T1).
        dialog.acks.set(seq, this.stack.transactions.sendAck(ack, to));
      },
      (error: Error) => this.warn(`could not send an ACK: ${error.message}`),
    );
  }

  /** Sends an ACK again (the same bytes, the same branch). */
  resendAck(dialog: Dialog, ack: Buffer): void {
    this.destinationOf(dialog).then(
      (to) => this.stack.transactions.resendAck(ack, to),
      (error: Error) => this.warn(`could not send an ACK: ${error.message}`),
    );
  }

  /**
   * Sends a 2xx to an INVITE (the dialog's or a re-INVITE) and retransmits it until its ACK;
   * after 64*T1 without one, the dialog ends with a BYE (RFC 3261 13.3.1.4).
   */
  answerInvite(
    dialog: Dialog,
    transaction: ServerTransaction,
    response: SipResponse,
    hooks: AckWaitHooks = {},
  ): void {
    const seq = transaction.request.cseq().seq;
    transaction.respond(response);
    const data = response.toBuffer();
    const retransmitter = new AnswerRetransmitter(
      this.scheduler,
      this.timers,
      () => this.stack.transactions.resend(data, transaction.route, transaction.flow),
      () => this.noAck(dialog, seq),
    );
    let waits = this.ackWaits.get(dialog);
    if (!waits) this.ackWaits.set(dialog, (waits = new Map()));
    waits.get(seq)?.retransmitter.stop();
    waits.set(seq, { retransmitter, hooks, after: [] });
    retransmitter.start();
  }

  /** True while a 2xx of ours in this dialog waits for its ACK. */
  awaitingAck(dialog: Dialog): boolean {
    return (this.ackWaits.get(dialog)?.size ?? 0) > 0;
  }

  /** Ends every dialog (shutdown). */
  close(): void {
    for (const dialog of [...this.dialogs.values()]) dialog.terminate({ kind: 'shutdown' });
  }

  /** Runs an owner's callback; one that throws is reported, not passed on. */
  safely(run: () => void): boolean {
    try {
      run();
      return true;
    } catch (error) {
      this.warn(`a dialog owner's callback threw: ${(error as Error).message}`);
      return false;
    }
  }

  warn(message: string): void {
    this.options.onWarning?.(message);
  }

  /** Ends a dialog with a BYE, once any 2xx of ours in it has its ACK (RFC 3261 15). */
  async bye(dialog: Dialog): Promise<SipResponse | null> {
    if (dialog.state === 'terminated') return null;
    const waits = this.ackWaits.get(dialog);
    if (waits && waits.size > 0) {
      // RFC 3261 15: "the callee's UA MUST NOT send a BYE on a confirmed dialog until it has
      // received an ACK for its 2xx response or until the server transaction times out."
      const wait = [...waits.values()].at(-1)!;
      return new Promise((resolve) => wait.after.push(() => resolve(this.bye(dialog))));
    }
    return sendBye(this, dialog, { kind: 'bye', by: 'local' });
  }

  private ended(dialog: Dialog, end: DialogEnd): void {
    this.dialogs.delete(dialog.id);
    const waits = this.ackWaits.get(dialog);
    this.ackWaits.delete(dialog);
    for (const wait of waits?.values() ?? []) {
      wait.retransmitter.stop();
      for (const run of wait.after) run();
    }
    // RFC 3261 15.1.2: requests still pending in the dialog get 487.
    for (const transaction of dialog.pendingIn.values()) {
      this.cancelWatch.delete(transaction);
      if (!transaction.answered) transaction.respond(responseTo(transaction.request, 487));
    }
    dialog.pendingIn.clear();
    if (dialog.acks.size > 0) {
      this.lingering.set(dialog.id, dialog);
      this.scheduler.after(64 * this.timers.t1, () => this.lingering.delete(dialog.id));
    }
    for (const hook of dialog.whenEnded) this.safely(() => hook(end));
    this.safely(() => dialog.delegate.onTerminated?.(end));
    // A dialog lingers 64*T1 to ACK 2xx retransmissions; its owner (a call) need not.
    dialog.whenEnded.length = 0;
    dialog.delegate = {};
  }

  private endWait(dialog: Dialog, seq: number): void {
    const waits = this.ackWaits.get(dialog);
    waits?.get(seq)?.retransmitter.stop();
    waits?.delete(seq);
    if (waits?.size === 0) this.ackWaits.delete(dialog);
  }

  private noAck(dialog: Dialog, seq: number): void {
    const wait = this.ackWaits.get(dialog)?.get(seq);
    this.endWait(dialog, seq);
    if (wait) this.safely(() => wait.hooks.onGiveUp?.());
    // RFC 3261 13.3.1.4: "the dialog is confirmed, but the session SHOULD be terminated. This
    // is accomplished with a BYE."
    if (dialog.state !== 'terminated') void sendBye(this, dialog, { kind: 'no-ack' });
    for (const run of wait?.after ?? []) run();
  }

  /** Our Via, written first among the headers (where every reader expects it). */
  private placeVia(request: SipRequest, destination: Destination): void {
    this.stack.transactions.addVia(request, destination);
    const rows = [...request.headers];
    const isVia = ([name]: readonly [string, string]) => headerKey(name) === 'via';
    request.headers = new SipHeaders([...rows.filter(isVia), ...rows.filter((r) => !isVia(r))]);
  }
}
