import type { SipRequest, SipResponse } from '../message/index.js';

/** RFC 3261 12: a dialog is identified by the Call-ID, the local tag and the remote tag. */
export const dialogId = (callId: string, localTag: string, remoteTag: string): string =>
  `${callId}|${localTag}|${remoteTag}`;

/**
 * The id of the dialog a received request belongs to (RFC 3261 12.2.2): our tag is in its To,
 * the peer's in its From. Also the id of a received ACK.
 */
export const idOfReceivedRequest = (request: SipRequest): string =>
  dialogId(request.callId(), request.to().tag ?? '', request.from().tag ?? '');

/** The id of the dialog a response to our request belongs to: our tag is in its From. */
export const idOfResponse = (response: SipResponse): string =>
  dialogId(response.callId(), response.from().tag ?? '', response.to().tag ?? '');
