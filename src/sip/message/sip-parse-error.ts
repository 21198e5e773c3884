import type { SipHeaders } from './sip-headers.js';

/**
 * What kind of fault a SipParseError reports, which decides how a UAS answers a request:
 * - `malformed`: 400 Bad Request.
 * - `version-not-supported`: 505 Version Not Supported (RFC 3261 8.2.2 / 21.5.7).
 * - `too-large`: 513 Message Too Large (RFC 3261 21.4.13).
 * - `unsupported-uri-scheme`: 416 Unsupported URI Scheme (RFC 3261 8.2.2.1).
 */
export type SipParseErrorKind =
  'malformed' | 'version-not-supported' | 'too-large' | 'unsupported-uri-scheme';

/** What could be read of a message that failed to parse: enough for a UAS to answer it. */
export interface PartialMessage {
  /** The start line as received (latin1), '' when there was none. */
  readonly startLine: string;
  /** Every header row that was well formed, in order, unfolded. */
  readonly headers: SipHeaders;
}

export interface SipParseErrorDetails {
  kind?: SipParseErrorKind;
  /** Canonical name of the header at fault, when one is. */
  header?: string | null;
  /** True for a request, false for a response, null when the start line was unreadable. */
  isRequest?: boolean | null;
  method?: string | null;
  partial?: PartialMessage | null;
}

/**
 * A message, header or URI that does not follow the RFC 3261 grammar. `reason` is a short
 * statement of what was wrong, written to be used as the reason phrase of a 400.
 */
export class SipParseError extends Error {
  readonly reason: string;
  readonly kind: SipParseErrorKind;
  readonly header: string | null;
  readonly isRequest: boolean | null;
  readonly method: string | null;
  readonly partial: PartialMessage | null;

  constructor(reason: string, details: SipParseErrorDetails = {}) {
    super(reason);
    this.name = 'SipParseError';
    this.reason = reason;
    this.kind = details.kind ?? 'malformed';
    this.header = details.header ?? null;
    this.isRequest = details.isRequest ?? null;
    this.method = details.method ?? null;
    this.partial = details.partial ?? null;
  }

  /** The same fault, told about the message it was found in. */
  inMessage(isRequest: boolean, method: string | null): SipParseError {
    if (this.isRequest === isRequest && this.method === method) return this;
    return new SipParseError(this.reason, {
      kind: this.kind,
      header: this.header,
      isRequest,
      method,
      partial: this.partial,
    });
  }
}

const STATUS_BY_KIND: Readonly<Record<SipParseErrorKind, number>> = {
  malformed: 400,
  'version-not-supported': 505,
  'too-large': 513,
  'unsupported-uri-scheme': 416,
};

/**
 * The status a UAS answers a rejected request with, or null when nothing may be answered:
 * a response that does not parse is dropped (as RFC 4475 section 3.1.2 says of each of
 * them), and so is a message whose start line could not be read. An ACK is never answered.
 */
export function rejectionStatus(error: SipParseError): number | null {
  if (error.isRequest !== true || error.method === 'ACK') return null;
  return STATUS_BY_KIND[error.kind];
}

/** "SIP/" and a digit as a word of the start line: where a Request-Line or Status-Line has it. */
const SIP_VERSION_WORD = /(?:^|[ \t])SIP\/\d/i;

/**
 * Whether a message that failed to parse still reads as SIP: its start line names a SIP
 * version (at the end of a Request-Line or the start of a Status-Line, however malformed the
 * rest) and header rows follow. Anything else (a stray byte, an HTTP request, a STUN packet)
 * is not SIP at all, and is not answered.
 */
export function claimsSip(error: SipParseError): boolean {
  const partial = error.partial;
  return partial !== null && SIP_VERSION_WORD.test(partial.startLine) && partial.headers.size > 0;
}
