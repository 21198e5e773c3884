import { CodedText, type WireRows } from './coded-text.js';
import { TOKEN, WORD, isWsp, parseDigits, trimWsp } from './grammar.js';
import { SipParseError } from './sip-parse-error.js';
import { ValueScanner } from './value-scanner.js';

/** 2**32 - 1: the largest CSeq number and delta-seconds (RFC 3261 8.1.1.5, 20.19). */
export const MAX_UINT32 = 0xffffffff;

export interface CSeq {
  /** 32-bit unsigned. */
  readonly seq: number;
  readonly method: string;
}

function malformed(header: string): SipParseError {
  return new SipParseError(`Malformed ${header} header`, { header });
}

/** The one row of a header that may appear once; null when absent. */
export function singleRow(rows: string[], header: string): string | null {
  if (rows.length > 1) throw new SipParseError(`Multiple ${header} headers`, { header });
  return rows[0] ?? null;
}

/** singleRow, for a header the message cannot do without. */
export function requiredRow(rows: string[], header: string): string {
  const row = singleRow(rows, header);
  if (row === null) throw new SipParseError(`Missing ${header} header`, { header });
  return row;
}

/** The one row of a header that must appear once, with its codes. */
function requiredCoded(rows: string[], wire: WireRows | undefined, header: string): CodedText {
  const row = requiredRow(rows, header);
  return wire?.[0] ?? CodedText.of(row);
}

/** callid = word [ "@" word ] (RFC 3261 20.8) */
export function parseCallId(rows: string[], wire?: WireRows): string {
  const value = requiredCoded(rows, wire, 'Call-ID');
  const at = value.text.indexOf('@');
  const ok =
    at === -1
      ? value.allOfClass(WORD)
      : value.allOfClass(WORD, 0, at) && value.allOfClass(WORD, at + 1);
  if (!ok) throw malformed('Call-ID');
  return value.text;
}

/** CSeq = 1*DIGIT LWS Method (RFC 3261 20.16) */
export function parseCSeq(rows: string[], wire?: WireRows): CSeq {
  const value = requiredCoded(rows, wire, 'CSeq');
  const text = value.text;
  let i = 0;
  while (i < text.length && !isWsp(value.at(i))) i++;
  // RFC 3261 8.1.1.5: the sequence number MUST be expressible as a 32-bit unsigned integer.
  const seq = parseDigits(text, MAX_UINT32, 0, i);
  const from = value.skipWsp(i);
  const method = trimWsp(text, from);
  if (seq < 0 || i === text.length || !value.allOfClass(TOKEN, from, from + method.length)) {
    throw malformed('CSeq');
  }
  return { seq, method };
}

/** Max-Forwards = 1*DIGIT, 0 to 255 (RFC 3261 20.22); null when absent. */
export function parseMaxForwards(rows: string[]): number | null {
  return parseInteger(rows, 'Max-Forwards', 255);
}

/** Expires = delta-seconds (RFC 3261 20.19); null when absent. */
export function parseExpires(rows: string[]): number | null {
  return parseInteger(rows, 'Expires', MAX_UINT32);
}

/** Content-Length = 1*DIGIT (RFC 3261 20.14); null when absent. */
export function parseContentLength(rows: string[]): number | null {
  return parseInteger(rows, 'Content-Length', MAX_UINT32);
}

function parseInteger(rows: string[], header: string, max: number): number | null {
  const value = singleRow(rows, header);
  if (value === null) return null;
  const n = parseDigits(value, max);
  if (n < 0) throw malformed(header);
  return n;
}

/**
 * option-tag *(COMMA option-tag), over every row (Require, Proxy-Require, Supported,
 * Unsupported). Supported may be empty (RFC 3261 20.37); the others may not.
 */
export function parseOptionTags(rows: string[], header: string, allowEmpty: boolean): string[] {
  const tags: string[] = [];
  for (const row of rows) {
    if (row.length === 0 && allowEmpty) continue;
    const scanner = new ValueScanner(row, header);
    for (;;) {
      scanner.skipWs();
      tags.push(scanner.token());
      scanner.skipWs();
      if (scanner.atEnd) break;
      scanner.expect(0x2c);
    }
  }
  return tags;
}
