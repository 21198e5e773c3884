import type { NameAddr } from './name-addr.js';
import type { SipMessage } from './sip-message.js';
import { SipParseError } from './sip-parse-error.js';
import type { SipRequest } from './sip-request.js';
import type { SipResponse } from './sip-response.js';
import { type AbsoluteUri, type SipUri, isSipUri } from './sip-uri.js';

/**
 * Checks that a request is one a UAS or proxy can act on: every header RFC 3261 requires is
 * present once and parses, and every header it gives a grammar to (among those the stack
 * reads) parses. Throws the first fault as a SipParseError; rejectionStatus maps it to the
 * answer (400 for all of these).
 *
 * What is checked, in order: Via, From, To, Call-ID, CSeq (RFC 3261 8.1.1: the minimum every
 * request carries), that CSeq names the request's method, Max-Forwards, the Request-URI,
 * Contact, Route, Record-Route, Expires, Content-Type, Date, option tags and credentials.
 */
export function validateRequest(request: SipRequest): void {
  try {
    checkCore(request);
    // RFC 3261 8.1.1.5: the method in CSeq MUST match that of the request.
    if (request.cseq().method !== request.method) {
      throw new SipParseError('CSeq method does not match the request method', { header: 'CSeq' });
    }
    request.maxForwards();
    // RFC 3261 19.1.1: headers are not allowed in a Request-URI (RFC 4475 3.1.2.10).
    checkNoUriHeaders(request.requestUri(), 'Request-URI', 'Malformed Request-URI');
    checkOptional(request);
    request.requires();
    request.proxyRequire();
    request.authorization();
    request.proxyAuthorization();
  } catch (error) {
    throw error instanceof SipParseError ? error.inMessage(true, request.method) : error;
  }
}

/**
 * The same checks for a response (without those about the request line). A response that
 * fails them is dropped (rejectionStatus gives null).
 */
export function validateResponse(response: SipResponse): void {
  try {
    checkCore(response);
    checkOptional(response);
    response.wwwAuthenticate();
    response.proxyAuthenticate();
  } catch (error) {
    throw error instanceof SipParseError ? error.inMessage(false, null) : error;
  }
}

function checkCore(message: SipMessage): void {
  // RFC 3261 8.1.1: a valid request contains at least To, From, CSeq, Call-ID, Max-Forwards
  // and Via. Max-Forwards is left out: RFC 3261 16.3 accepts a request without it, as RFC
  // 4475 3.4 asks for RFC 2543 peers.
  if (message.via().length === 0) {
    throw new SipParseError('Missing Via header', { header: 'Via' });
  }
  checkAddress(message.from(), 'From');
  checkAddress(message.to(), 'To');
  message.callId();
  message.cseq();
}

function checkOptional(message: SipMessage): void {
  message.contact();
  for (const route of message.route()) checkAddress(route, 'Route');
  for (const route of message.recordRoute()) checkAddress(route, 'Record-Route');
  message.expires();
  message.contentLength();
  message.contentType();
  message.date();
  message.supported();
  message.unsupported();
}

/** RFC 3261 19.1.1: URI headers are not allowed in From, To, Route or Record-Route. */
function checkAddress(address: NameAddr, header: string): void {
  checkNoUriHeaders(address.uri, header, `Malformed ${header} header`);
}

function checkNoUriHeaders(uri: SipUri | AbsoluteUri, header: string, reason: string): void {
  if (isSipUri(uri) && uri.headers.size > 0) throw new SipParseError(reason, { header });
}
