import { randomHex } from '../../core/ids.js';
import { SipResponse, type SipRequest } from '../message/index.js';

/** The reason phrases RFC 3261 21 (and the RFCs it is extended by) give the codes we send. */
const REASONS: Readonly<Record<number, string>> = {
  100: 'Trying',
  180: 'Ringing',
  181: 'Call Is Being Forwarded',
  182: 'Queued',
  183: 'Session Progress',
  200: 'OK',
  202: 'Accepted',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  410: 'Gone',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  416: 'Unsupported URI Scheme',
  420: 'Bad Extension',
  423: 'Interval Too Brief',
  480: 'Temporarily Unavailable',
  481: 'Call/Transaction Does Not Exist',
  482: 'Loop Detected',
  483: 'Too Many Hops',
  484: 'Address Incomplete',
  486: 'Busy Here',
  487: 'Request Terminated',
  488: 'Not Acceptable Here',
  489: 'Bad Event',
  491: 'Request Pending',
  500: 'Server Internal Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  504: 'Server Time-out',
  505: 'Version Not Supported',
  513: 'Message Too Large',
  600: 'Busy Everywhere',
  603: 'Decline',
  604: 'Does Not Exist Anywhere',
  606: 'Not Acceptable',
};

export const reasonPhrase = (status: number): string => REASONS[status] ?? '';

/** A fresh tag for a To or From header (RFC 3261 19.3: at least 32 bits of randomness). */
export const newTag = (): string => randomHex(6);

export interface ResponseOptions {
  reason?: string;
  /** The To tag to add when the request's To has none (a fresh one when left out). */
  toTag?: string;
  headers?: Iterable<readonly [string, string]>;
  body?: Buffer | string;
}

/**
 * RFC 3261 8.2.6.2: a response to `request`. Via, From, Call-ID and CSeq are copied as
 * received; To is copied and, for anything but a 100, given a tag when it has none.
 */
export function responseTo(
  request: SipRequest,
  status: number,
  options: ResponseOptions = {},
): SipResponse {
  const rows: [string, string][] = [];
  for (const value of request.headers.getRows('Via')) rows.push(['Via', value]);
  rows.push(['From', request.headers.get('From') ?? '']);
  let to = request.headers.get('To') ?? '';
  if (status > 100 && request.to().tag === null) to += `;tag=${options.toTag ?? newTag()}`;
  rows.push(['To', to]);
  rows.push(['Call-ID', request.headers.get('Call-ID') ?? '']);
  rows.push(['CSeq', request.headers.get('CSeq') ?? '']);
  if (options.headers) for (const [name, value] of options.headers) rows.push([name, value]);
  return new SipResponse({
    status,
    reason: options.reason === undefined ? reasonPhrase(status) : printable(options.reason),
    headers: rows,
    body: options.body,
  });
}

/**
 * A reason phrase made from text that may come from the peer (an error naming a bad SDP line,
 * say): RFC 3261 25.1 allows no CR or LF there, so control characters become spaces, and it is
 * kept to 100 characters.
 */
function printable(reason: string): string {
  return reason.replace(/[\x00-\x08\x0a-\x1f\x7f]/g, ' ').slice(0, 100);
}
