import { randomInt } from 'node:crypto';
import type { SipRequest, SipResponse } from '../message/index.js';
import { responseTo } from '../transaction/response-to.js';
import type { ServerTransaction } from '../transaction/transaction-layer.js';
import type { Dialog } from './dialog.js';
import type { OfferReply, SessionOffer } from './dialog-delegate.js';
import type { DialogLayer } from './dialog-layer.js';
import { SDP, sdpOf } from './session-body.js';

/**
 * RFC 3261 12.2.2 and 15.1.2, RFC 3311, RFC 6086: answers a request received in a dialog.
 * One that came on another connection than the dialog's moves the dialog to it (Dialog.follow)
 * when its peer is a client its owner can find again (DialogDelegate.reachableAt).
 * BYE ends the dialog; re-INVITE and UPDATE go to the owner's onOffer (glare answered 491 or
 * 500 first); INFO, OPTIONS and other methods to the owner's callback or a default answer.
 */
export function serveInDialog(
  layer: DialogLayer,
  dialog: Dialog,
  request: SipRequest,
  transaction: ServerTransaction,
): void {
  // RFC 3261 12.2.2: "If the remote sequence number was not empty, but the sequence number of
  // the request is lower than the remote sequence number, the request is out of order and
  // MUST be rejected with a 500 (Server Internal Error) response."
  if (!dialog.admit(request)) {
    transaction.respond(responseTo(request, 500));
    return;
  }
  const delegate = dialog.delegate;
  // A client registered over a connection (a browser) that sends on another has moved there;
  // a trunk's or a carrier's extra connection is left alone.
  if (delegate.reachableAt) dialog.follow(transaction.flow);
  switch (request.method) {
    case 'BYE':
      // RFC 3261 15.1.2: the UAS "SHOULD terminate the session ... and generate a 2xx".
      transaction.respond(responseTo(request, 200));
      dialog.terminate({ kind: 'bye', by: 'remote' });
      return;
    case 'INVITE':
    case 'UPDATE':
      serveOffer(layer, dialog, request, transaction);
      return;
    case 'INFO':
      if (delegate.onInfo)
        handOver(layer, transaction, () => delegate.onInfo!(request, transaction));
      else transaction.respond(responseTo(request, 200));
      return;
    case 'OPTIONS':
      if (delegate.onOptions) {
        handOver(layer, transaction, () => delegate.onOptions!(request, transaction));
      } else {
        transaction.respond(
          responseTo(request, 200, {
            headers: [
              ['Allow', layer.allowed().join(', ')],
              ['Accept', SDP],
            ],
          }),
        );
      }
      return;
    default:
      if (delegate.onRequest) {
        handOver(layer, transaction, () => delegate.onRequest!(request, transaction));
      } else {
        transaction.respond(responseTo(request, 501));
      }
  }
}

/** A re-INVITE or an UPDATE (RFC 3261 14.2, RFC 3311 5.2). */
function serveOffer(
  layer: DialogLayer,
  dialog: Dialog,
  request: SipRequest,
  transaction: ServerTransaction,
): void {
  const method = request.method as 'INVITE' | 'UPDATE';
  const sdp = sdpOf(request);
  if (method === 'INVITE' || sdp !== null) {
    // RFC 3261 14.2: "A UAS that receives a second INVITE before it sends the final response
    // to a first INVITE with a lower CSeq sequence number on the same dialog MUST return a
    // 500 (Server Internal Error) response to the second INVITE and MUST include a
    // Retry-After header field with a randomly chosen value of between 0 and 10 seconds."
    // RFC 3311 5.2 says the same of an UPDATE offer while one of the peer's is unanswered.
    if (dialog.pendingIn.size > 0) {
      const retryAfter = String(randomInt(0, 11));
      transaction.respond(responseTo(request, 500, { headers: [['Retry-After', retryAfter]] }));
      return;
    }
    // RFC 3261 14.2: "A UAS that receives an INVITE on a dialog while an INVITE it had sent
    // on that dialog is in progress MUST return a 491 (Request Pending) response"; RFC 3311
    // 5.2 likewise while an offer of ours is unanswered.
    if (dialog.pendingOut.size > 0) {
      transaction.respond(responseTo(request, 491));
      return;
    }
  }
  if (method === 'UPDATE' && sdp === null) {
    // An UPDATE without an offer only refreshes the target (or a session timer).
    dialog.refreshTarget(request);
    transaction.respond(responseTo(request, 200, { headers: contactOf(dialog) }));
    return;
  }
  dialog.pendingIn.set(method, transaction);
  if (method === 'INVITE') {
    layer.watchCancel(transaction, () => {
      dialog.pendingIn.delete(method);
      // RFC 3261 9.2: the re-INVITE is answered 487; the dialog and session stay as they were.
      if (!transaction.answered) transaction.respond(responseTo(request, 487));
    });
  }
  const offer: SessionOffer = { method, request, sdp };
  const reply = new Promise<OfferReply>((resolve) =>
    resolve(dialog.delegate.onOffer ? dialog.delegate.onOffer(offer) : currentSession(dialog)),
  );
  // Whatever goes wrong answering (the owner, or sending its answer) ends in a 500, never in
  // an unhandled rejection.
  reply
    .then((answer) => replyToOffer(layer, dialog, offer, transaction, answer))
    .catch((error: Error) => {
      layer.warn(`the owner of dialog ${dialog.id} failed to answer a ${method}: ${error.message}`);
      if (!transaction.answered) replyToOffer(layer, dialog, offer, transaction, { status: 500 });
    });
}

function replyToOffer(
  layer: DialogLayer,
  dialog: Dialog,
  offer: SessionOffer,
  transaction: ServerTransaction,
  reply: OfferReply,
): void {
  const { method, request } = offer;
  if (dialog.pendingIn.get(method) !== transaction) return; // cancelled, or the dialog ended
  dialog.pendingIn.delete(method);
  layer.unwatchCancel(transaction);
  if (transaction.answered) return;
  if (!('sdp' in reply)) {
    const status = reply.status >= 300 && reply.status <= 699 ? reply.status : 500;
    const headers = reply.headers ?? [];
    transaction.respond(responseTo(request, status, { reason: reply.reason, headers }));
    return;
  }
  // The target refreshes once the request is accepted (RFC 6141 3.3 on RFC 3261 12.2.2).
  dialog.refreshTarget(request);
  if (offer.sdp !== null) dialog.remoteSdp = offer.sdp;
  dialog.localSdp = reply.sdp;
  const headers: (readonly [string, string])[] = [
    ...request.headers.getRows('Record-Route').map((row) => ['Record-Route', row] as const),
    ...contactOf(dialog),
    ['Allow', layer.allowed().join(', ')],
    ...(reply.headers ?? []),
    ['Content-Type', SDP],
  ];
  const response: SipResponse = responseTo(request, 200, { headers, body: reply.sdp });
  if (method === 'UPDATE') {
    transaction.respond(response);
    return;
  }
  layer.answerInvite(dialog, transaction, response, {
    // An offerless re-INVITE: our 2xx was the offer and the ACK carries the answer.
    onAck: (ack) => {
      const answer = offer.sdp === null ? sdpOf(ack) : null;
      if (answer !== null) dialog.remoteSdp = answer;
    },
  });
}

/** Without an owner's answer, a re-INVITE or UPDATE gets our current session again. */
function currentSession(dialog: Dialog): OfferReply {
  return dialog.localSdp !== null ? { sdp: dialog.localSdp } : { status: 488 };
}

function contactOf(dialog: Dialog): [string, string][] {
  return [['Contact', `<${dialog.localTarget}>`]];
}

/** Hands a request to an owner's callback; one that throws leaves a 500 behind. */
function handOver(layer: DialogLayer, transaction: ServerTransaction, run: () => void): void {
  if (!layer.safely(run) && !transaction.answered) {
    transaction.respond(responseTo(transaction.request, 500));
  }
}
