import type { SipRequest, SipResponse } from '../message/index.js';

/** RFC 3261 8.1.1.7: a branch that begins with the magic cookie is unique in space and time. */
export const MAGIC_COOKIE = 'z9hG4bK';

/**
 * The key of the server transaction a request belongs to (RFC 3261 17.2.3). With the magic
 * cookie: the branch, the sent-by and the method (an ACK belongs to its INVITE, and so does
 * a CANCEL when `asInvite` is set). Without it (RFC 2543 peers): the Request-URI, From tag,
 * Call-ID, CSeq number and top Via; the To tag as well, except for the INVITE family, whose
 * ACK carries the tag of our response (the layer checks that one itself).
 */
export function serverKey(request: SipRequest, asInvite = false): string {
  const via = request.topVia();
  const method = asInvite || request.method === 'ACK' ? 'INVITE' : request.method;
  const branch = via.branch;
  if (branch !== null && branch.startsWith(MAGIC_COOKIE)) {
    return `${branch}|${via.host}:${via.port ?? ''}|${method}`;
  }
  const toTag = method === 'INVITE' ? '' : (request.to().tag ?? '');
  return [
    '2543',
    request.uri,
    request.from().tag ?? '',
    toTag,
    request.callId(),
    request.cseq().seq,
    request.headers.getRows('Via')[0],
    method,
  ].join('|');
}

/** RFC 3261 17.1.3: a response matches the client transaction of its branch and CSeq method. */
export function clientKey(message: SipRequest | SipResponse): string | null {
  const branch = message.topVia().branch;
  return branch === null ? null : `${branch}|${message.cseq().method}`;
}

/**
 * RFC 3261 8.2.2.2: requests without a To tag that share From tag, Call-ID and CSeq are the
 * same request; arriving under another transaction, it is a merged (looped) one.
 */
export function mergeKey(request: SipRequest): string | null {
  if (request.to().tag !== null || request.method === 'ACK') return null;
  const cseq = request.cseq();
  return `${request.from().tag ?? ''}|${request.callId()}|${cseq.seq}|${cseq.method}`;
}
