import { answerChallenge } from '../auth/challenge-answer.js';
import type { SipRequest, SipResponse } from '../message/index.js';
import { responseTo } from '../transaction/response-to.js';
import type { Destination } from '../transport/transport-layer.js';
import type { ClientTransactionUser } from '../transaction/transaction-layer.js';
import type { Dialog, DialogRequestOptions } from './dialog.js';
import type { DialogDelegate, DialogEnd } from './dialog-delegate.js';
import type { DialogLayer } from './dialog-layer.js';
import { sdpOf } from './session-body.js';

/**
 * RFC 3261 12.2.1: sends a request within a dialog for its owner and resolves with its final
 * response; a timeout or transport error resolves as the 408 or 503 of 8.1.3.1. A 2xx to a
 * re-INVITE is acknowledged; one to a target refresh moves the remote target. Rejects only
 * when the request may not be sent at all (an ended dialog, an exchange already under way).
 */
export async function requestInDialog(
  layer: DialogLayer,
  dialog: Dialog,
  method: string,
  options: DialogRequestOptions,
): Promise<SipResponse> {
  if (dialog.state === 'terminated') throw new Error(`dialog ${dialog.id} has ended`);
  if (method === 'BYE') {
    const response = await layer.bye(dialog);
    if (!response) throw new Error(`dialog ${dialog.id} ended before its BYE was sent`);
    return response;
  }
  const offer = method === 'INVITE' || method === 'UPDATE';
  if (offer && (dialog.pendingOut.size > 0 || dialog.pendingIn.size > 0)) {
    // RFC 3261 14.1: "A UAC MUST NOT initiate a new INVITE transaction within a dialog
    // while another INVITE transaction is in progress in either direction"; RFC 3311 5.1
    // likewise for an UPDATE while an offer is outstanding.
    throw new Error(`an offer/answer exchange is under way in dialog ${dialog.id}`);
  }
  if (offer) dialog.pendingOut.add(method);
  try {
    const { request, response } = await authorized(layer, dialog, () =>
      dialog.createRequest(method, options),
    );
    afterFinal(layer, dialog, request, response);
    return response;
  } finally {
    if (offer) dialog.pendingOut.delete(method);
  }
}

function afterFinal(
  layer: DialogLayer,
  dialog: Dialog,
  request: SipRequest,
  response: SipResponse,
): void {
  if (response.status >= 200 && response.status < 300) {
    dialog.refreshTarget(response);
    const offered = sdpOf(request);
    const answered = sdpOf(response);
    if (offered !== null) dialog.localSdp = offered;
    if (answered !== null) dialog.remoteSdp = answered;
    if (request.method === 'INVITE') layer.acknowledge(dialog, request);
    return;
  }
  // RFC 3261 12.2.1.2: "If the response for a request within a dialog is a 481 (Call/
  // Transaction Does Not Exist) or a 408 (Request Timeout), the UAC SHOULD terminate the
  // dialog."
  if (response.status === 481 || response.status === 408) {
    dialog.terminate({ kind: 'request-failed', method: request.method, status: response.status });
  }
}

/** Ends the dialog now and sends its BYE (RFC 3261 15.1.1: the session ends as it leaves). */
export async function sendBye(
  layer: DialogLayer,
  dialog: Dialog,
  end: DialogEnd,
): Promise<SipResponse> {
  const bye = dialog.createRequest('BYE');
  // The owner lets go of the dialog as it ends; where the peer is now is still asked.
  const reach = dialog.delegate.reachableAt;
  dialog.terminate(end);
  const { response } = await authorized(
    layer,
    dialog,
    () => dialog.createRequest('BYE'),
    bye,
    reach,
  );
  return response;
}

/**
 * Sends a request made by `build` (or `first`) and, when it is challenged and the dialog has
 * credentials, sends it again with them (RFC 3261 22.2: a new request, so a new CSeq, 8.1.3.5).
 * Once, or twice when the second challenge says the nonce was only stale (RFC 7616 3.3).
 */
async function authorized(
  layer: DialogLayer,
  dialog: Dialog,
  build: () => SipRequest,
  first: SipRequest = build(),
  reach = dialog.delegate.reachableAt,
): Promise<{ request: SipRequest; response: SipResponse }> {
  let request = first;
  let response = await exchange(layer, dialog, request, reach);
  for (let attempts = 0; dialog.credentials; attempts++) {
    if (response.status !== 401 && response.status !== 407) break;
    const answer = answerChallenge(response, request, dialog.credentials);
    if (!answer || attempts >= (answer.stale ? 2 : 1)) break;
    request = build();
    request.headers.append(answer.header, answer.value);
    response = await exchange(layer, dialog, request, reach);
  }
  return { request, response };
}

/** Sends a request of the dialog; resolves with its final response (408/503 made up). */
async function exchange(
  layer: DialogLayer,
  dialog: Dialog,
  request: SipRequest,
  reach: DialogDelegate['reachableAt'],
): Promise<SipResponse> {
  let destination: Destination;
  try {
    destination = await layer.requestDestination(dialog, reach);
  } catch (error) {
    return madeUp(request, 503, (error as Error).message);
  }
  return new Promise((resolve) => {
    const final = new FinalResponse(request, resolve);
    try {
      layer.sendRequest(request, destination, finalResponseUser(layer, dialog, request, final));
    } catch (error) {
      final.madeUp(503, (error as Error).message);
    }
  });
}

/**
 * The one final response an in-dialog request resolves with. The transaction outlives it
 * (Timer K, or M for a re-INVITE) and keeps its callbacks: once the response is in, this lets
 * go of the request and of the promise (which holds the response).
 */
class FinalResponse {
  private pending: { request: SipRequest; resolve: (response: SipResponse) => void } | null;

  constructor(request: SipRequest, resolve: (response: SipResponse) => void) {
    this.pending = { request, resolve };
  }

  get settled(): boolean {
    return this.pending === null;
  }

  settle(response: SipResponse): void {
    const pending = this.pending;
    this.pending = null;
    pending?.resolve(response);
  }

  /** RFC 3261 8.1.3.1: a timeout counts as a 408, a transport error as a 503. */
  madeUp(status: number, reason?: string): void {
    if (this.pending) this.settle(madeUp(this.pending.request, status, reason));
  }
}

/** The transaction's callbacks, made apart so that they keep what they need and no more. */
function finalResponseUser(
  layer: DialogLayer,
  dialog: Dialog,
  request: SipRequest,
  final: FinalResponse,
): ClientTransactionUser {
  const seq = request.cseq().seq;
  const reInvite = request.method === 'INVITE';
  return {
    onResponse: (response) => {
      if (response.status < 200) return;
      // RFC 6026 7.2: a retransmitted 2xx to a re-INVITE gets its ACK again.
      if (final.settled && response.status < 300 && reInvite) {
        const ack = dialog.acks.get(seq);
        if (ack) layer.resendAck(dialog, ack);
        return;
      }
      final.settle(response);
    },
    onTimeout: () => final.madeUp(408),
    onTransportError: (error) => final.madeUp(503, error.message),
  };
}

/** A final response made up for a request that got none (RFC 3261 8.1.3.1). */
function madeUp(request: SipRequest, status: number, reason?: string): SipResponse {
  return responseTo(request, status, reason ? { reason: reason.replace(/[\r\n]/g, ' ') } : {});
}
