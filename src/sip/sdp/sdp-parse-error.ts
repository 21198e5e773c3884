/**
 * A session description that does not follow the RFC 4566 grammar, or an answer that breaks
 * the RFC 3264 rules for answering our offer. `reason` says what was wrong, written to be used
 * as the text of a 400 or 488 Warning; `line` is the 1-based line at fault when there is one.
 */
export class SdpParseError extends Error {
  readonly reason: string;
  readonly line: number | null;

  constructor(reason: string, line: number | null = null) {
    super(line === null ? reason : `SDP line ${line}: ${reason}`);
    this.name = 'SdpParseError';
    this.reason = reason;
    this.line = line;
  }
}
