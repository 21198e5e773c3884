import { isSipUri, type SipRequest, type SipResponse } from '../message/index.js';
import { KNOWN_METHODS } from './methods.js';
import type { Flow } from '../transport/flow.js';
import { responseTo } from '../transaction/response-to.js';
import type {
  ServerTransaction,
  TransactionLayer,
  TransactionUser,
} from '../transaction/transaction-layer.js';

/** Handles one method's requests outside a dialog. */
export type RequestHandler = (request: SipRequest, transaction: ServerTransaction) => void;

export interface MethodOptions {
  /** Body types the handler reads (RFC 3261 8.2.3: others get 415). Default: none. */
  accepts?: readonly string[];
  /** RFC 3261 16.3: a request for this method with Max-Forwards 0 is answered 483. */
  forwarded?: boolean;
}

/** What the dialog layer takes from the core: requests, ACKs and 2xx inside dialogs. */
export interface DialogRouter {
  /** A request with a To tag; false when no dialog knows it (the core answers 481). */
  onInDialogRequest(request: SipRequest, transaction: ServerTransaction): boolean;
  onAck(ack: SipRequest, flow: Flow): void;
  onCancel(invite: ServerTransaction, cancel: SipRequest): void;
  onStrayResponse(response: SipResponse, flow: Flow): void;
}

/**
 * Option tags we support (RFC 3261 8.2.2.3: anything else in Require gets 420): path, which
 * the registrar implements (RFC 3327). 100rel, outbound and gruu are extensions we do not.
 */
const SUPPORTED_EXTENSIONS = new Set<string>(['path']);

/**
 * The UA core of RFC 3261 8.2: the checks every request passes before a handler sees it, in
 * the order the RFC gives: method (405), Request-URI scheme (416), merged requests (482, in
 * the transaction layer), Require (420), Max-Forwards (483), content type (415); then the
 * handler for its method, or the dialog layer for a request with a To tag.
 */
export class UserAgentCore implements TransactionUser {
  private readonly handlers = new Map<string, { handle: RequestHandler; options: MethodOptions }>();
  private dialogs: DialogRouter | null = null;

  constructor(readonly transactions: TransactionLayer) {
    transactions.setUser(this);
    this.handle('OPTIONS', (request, transaction) =>
      transaction.respond(this.optionsAnswer(request)),
    );
  }

  /** Handles a method outside dialogs (replacing the previous handler for it). */
  handle(method: string, handle: RequestHandler, options: MethodOptions = {}): void {
    this.handlers.set(method, { handle, options });
  }

  setDialogRouter(router: DialogRouter): void {
    this.dialogs = router;
  }

  /** The methods this UA accepts, for Allow. */
  allowed(): string[] {
    const methods = new Set(this.handlers.keys());
    if (this.dialogs) for (const m of ['ACK', 'BYE', 'CANCEL', 'INFO', 'UPDATE']) methods.add(m);
    return [...methods].sort();
  }

  onRequest(request: SipRequest, transaction: ServerTransaction): void {
    const rejection = this.check(request);
    if (rejection) {
      transaction.respond(rejection);
      return;
    }
    if (request.to().tag !== null) {
      if (!this.dialogs?.onInDialogRequest(request, transaction)) {
        transaction.respond(responseTo(request, 481));
      }
      return;
    }
    const handler = this.handlers.get(request.method);
    if (!handler) {
      // An out-of-dialog BYE or INFO names no dialog we know.
      const inDialogOnly =
        request.method === 'BYE' || request.method === 'INFO' || request.method === 'UPDATE';
      transaction.respond(inDialogOnly ? responseTo(request, 481) : this.notAllowed(request));
      return;
    }
    try {
      handler.handle(request, transaction);
    } catch (error) {
      if (!transaction.answered) {
        transaction.respond(responseTo(request, 500, { reason: 'Server Internal Error' }));
      }
      throw error;
    }
  }

  onAck(ack: SipRequest, flow: Flow): void {
    this.dialogs?.onAck(ack, flow);
  }

  onCancel(invite: ServerTransaction, cancel: SipRequest): void {
    if (this.dialogs) this.dialogs.onCancel(invite, cancel);
    else if (!invite.answered) invite.respond(responseTo(invite.request, 487));
  }

  onStrayResponse(response: SipResponse, flow: Flow): void {
    this.dialogs?.onStrayResponse(response, flow);
  }

  private check(request: SipRequest): SipResponse | null {
    const method = request.method;
    const known = this.handlers.get(method);
    const inDialog = request.to().tag !== null;
    if (!known && !inDialog && !['BYE', 'INFO', 'UPDATE'].includes(method)) {
      return this.notAllowed(request);
    }
    // RFC 3261 8.2.2.1: a scheme we do not understand gets 416.
    const uri = request.requestUri();
    if (!isSipUri(uri) && uri.scheme !== 'tel') return responseTo(request, 416);
    // RFC 3261 8.2.2.3: every Require tag must be one we support (not checked on CANCEL).
    if (method !== 'CANCEL') {
      const unsupported = request.requires().filter((tag) => !SUPPORTED_EXTENSIONS.has(tag));
      if (unsupported.length > 0) {
        return responseTo(request, 420, { headers: [['Unsupported', unsupported.join(', ')]] });
      }
    }
    // RFC 3261 16.3: a request we would pass on with Max-Forwards 0 has run out of hops.
    if (known?.options.forwarded && request.maxForwards() === 0) return responseTo(request, 483);
    // RFC 3261 8.2.3: a body of a type the handler does not read gets 415 with Accept.
    const accepts = known?.options.accepts ?? [];
    const type = request.contentType();
    if (request.body.length > 0 && !inDialog && type) {
      const mediaType = `${type.type}/${type.subtype}`.toLowerCase();
      if (!accepts.includes(mediaType)) {
        return responseTo(request, 415, { headers: [['Accept', accepts.join(', ')]] });
      }
    }
    // RFC 3261 8.2.2.2 answers for an INVITE whose answer could not be read by its sender.
    if (method === 'INVITE' && !acceptsSdp(request)) {
      return responseTo(request, 406, { headers: [['Accept', 'application/sdp']] });
    }
    return null;
  }

  /**
   * RFC 3261 8.2.1: a method we recognise but do not support gets 405 with Allow; one we do
   * not recognise at all gets 501 (21.5.2).
   */
  private notAllowed(request: SipRequest): SipResponse {
    const status = KNOWN_METHODS.has(request.method) ? 405 : 501;
    return responseTo(request, status, { headers: [['Allow', this.allowed().join(', ')]] });
  }

  private optionsAnswer(request: SipRequest): SipResponse {
    // RFC 3261 11.2: Allow, Accept and Supported say what we can do.
    return responseTo(request, 200, {
      headers: [
        ['Allow', this.allowed().join(', ')],
        ['Accept', 'application/sdp'],
        ['Supported', [...SUPPORTED_EXTENSIONS].join(', ')],
      ],
    });
  }
}

/** RFC 3261 20.1: an INVITE whose Accept leaves out SDP cannot read the answer we would send. */
function acceptsSdp(request: SipRequest): boolean {
  const accept = request.headers.getAll('Accept');
  if (accept.length === 0) return true;
  return accept.some((value) => {
    const type = value.split(';')[0]!.trim().toLowerCase();
    return type === 'application/sdp' || type === 'application/*' || type === '*/*';
  });
}
