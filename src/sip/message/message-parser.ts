import { CodedText } from './coded-text.js';
import { type Head, contentLength, readHead } from './message-head.js';
import { textFromOctets } from './octets.js';
import { SipHeaders } from './sip-headers.js';
import { SipParseError, type SipParseErrorKind } from './sip-parse-error.js';
import { SipRequest } from './sip-request.js';
import { SipResponse } from './sip-response.js';
import { parseStartLine, type StartLine } from './start-line.js';

export interface ParseOptions {
  /** Largest message accepted, in octets (65535 unless given). */
  maxSize?: number;
  /**
   * True for a message framed from a stream (TCP, TLS): Content-Length is then required
   * (RFC 3261 18.3). False for a datagram, where it may be absent and the body is the rest.
   */
  streamed?: boolean;
}

export const DEFAULT_MAX_SIZE = 65535;

const NO_OPTIONS: ParseOptions = {};

/**
 * Parses one SIP message (RFC 3261 section 7). The head is split once; header values are
 * only unfolded here and parsed by the typed accessors when first asked for, reading the
 * octets of `data` (as the body does: it is a view of them), so `data` is not to be changed
 * afterwards.
 *
 * Throws a SipParseError whose `partial` holds what could be read, so that a UAS can still
 * answer a request it cannot accept (see rejectionStatus).
 */
export function parseMessage(
  data: Buffer,
  options: ParseOptions = NO_OPTIONS,
): SipRequest | SipResponse {
  const maxSize = options.maxSize ?? DEFAULT_MAX_SIZE;
  const head = readHead(data, Math.min(data.length, maxSize));
  const start = parseStartLine(head.startLine);
  const fault = framingFault(data, head, start, maxSize, options.streamed === true);
  if (typeof fault === 'string') {
    const kind: SipParseErrorKind =
      fault === TOO_LARGE ? 'too-large' : fault === start.error ? start.errorKind : 'malformed';
    throw new SipParseError(fault, {
      kind,
      isRequest: start.isRequest,
      method: start.method,
      partial: {
        startLine: head.startLine,
        headers: SipHeaders.fromRead(head),
      },
    });
  }
  return build(start, head, data.subarray(head.bodyStart, fault));
}

const TOO_LARGE = 'Message too large';

/** Where the body ends, or why the message cannot be taken (the first fault, in order). */
function framingFault(
  data: Buffer,
  head: Head,
  start: StartLine,
  maxSize: number,
  streamed: boolean,
): number | string {
  // RFC 3261 21.4.13: a message beyond what we accept is refused (its start line may be cut).
  if (data.length > maxSize) return TOO_LARGE;
  if (start.error !== null) return start.error;
  if (head.bodyStart === -1) return 'Missing end of headers';
  if (head.rowError !== null) return head.rowError;
  const length = contentLength(head);
  if (typeof length === 'string') return length;
  if (length === null) {
    // RFC 3261 18.3: stream-oriented transports MUST use Content-Length.
    return streamed ? 'Missing Content-Length' : data.length;
  }
  // RFC 3261 18.3: octets beyond Content-Length are discarded; fewer is an error.
  if (head.bodyStart + length > data.length) return 'Content-Length exceeds body';
  return head.bodyStart + length;
}

function build(start: StartLine, head: Head, body: Buffer): SipRequest | SipResponse {
  const headers = SipHeaders.fromRead(head);
  if (start.isRequest) {
    const method = start.method!;
    const uri = start.uri!;
    // Request-Line = Method SP Request-URI SP SIP-Version
    const uriCodes = new CodedText(uri, head.octets, head.base + method.length + 1);
    return SipRequest.fromWire({ method, uri, headers, body }, uriCodes);
  }
  return new SipResponse({
    status: start.status!,
    reason: textFromOctets(start.reason!),
    headers,
    body,
  });
}
