import { isToken, isWsp, parseDigits, trimWsp } from './grammar.js';
import { headerKey, knownHeaderKey } from './header-names.js';
import { MAX_UINT32 } from './scalar-headers.js';

/** The head of a message, split into its start line and unfolded header rows. */
export interface Head {
  startLine: string;
  names: string[];
  /** headerKey of each name. */
  keys: string[];
  values: string[];
  /** Where the body starts, or -1 when the head has no end (no empty line). */
  bodyStart: number;
  /** The first reason a row was left out, or null. */
  rowError: string | null;
}

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * Splits the head into its start line and header rows, unfolding continuation lines. Reads
 * at most `limit` octets; a malformed row is left out and reported, the others kept.
 */
export function readHead(data: Buffer, limit: number): Head {
  let start = 0;
  // RFC 3261 7.5: CRLFs before the start line are ignored.
  while (start + 1 < limit && data[start] === 0x0d && data[start + 1] === 0x0a) start += 2;
  let end = data.indexOf(HEAD_END, start);
  let bodyStart = end + 4;
  if (end === -1 || end + 4 > limit) {
    bodyStart = -1;
    end = data.subarray(0, limit).lastIndexOf(CRLF);
    if (end < start) end = limit - 2;
  }
  // Every line of this text, the last included, ends in CRLF (unless there was no CRLF).
  const text = data.toString('latin1', start, end + 2);
  let lineEnd = text.indexOf('\r\n');
  if (lineEnd === -1) lineEnd = text.length;
  const startLine = text.slice(0, lineEnd);
  const rows: Rows = { names: [], keys: [], values: [] };
  let rowError = readRows(text, lineEnd + 2, rows);
  // RFC 3261 7: lines end in CRLF; a CR or LF anywhere else is not SIP.
  if (hasLineBreak(startLine, 0, startLine.length)) rowError ??= 'Bad line ending';
  return { startLine, ...rows, bodyStart, rowError };
}

function hasLineBreak(text: string, from: number, to: number): boolean {
  const cr = text.indexOf('\r', from);
  const lf = text.indexOf('\n', from);
  return (cr !== -1 && cr < to) || (lf !== -1 && lf < to);
}

interface Rows {
  names: string[];
  keys: string[];
  values: string[];
}

/** Reads the header rows of `text` from `pos`, each line ending in CRLF. */
function readRows(text: string, pos: number, rows: Rows): string | null {
  const { names, keys, values } = rows;
  let error: string | null = null;
  let skipping = false;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos) - 1;
    if (end < 0) end = text.length;
    const line = pos;
    pos = end + 2;
    if (text.charCodeAt(end) !== 0x0d || text.indexOf('\r', line) !== end) {
      error ??= 'Bad line ending';
      skipping = true;
      continue;
    }
    if (isWsp(text.charCodeAt(line))) {
      // RFC 3261 7.3.1: a line starting with SP or HTAB continues the header value above,
      // and the folding counts as a single SP.
      if (values.length === 0 || skipping) {
        error ??= 'Malformed header line';
        continue;
      }
      const more = trimWsp(text, line, end);
      const last = values.length - 1;
      const before = values[last]!;
      values[last] = before.length === 0 ? more : more.length === 0 ? before : `${before} ${more}`;
      continue;
    }
    // header-name HCOLON header-value, HCOLON = *( SP / HTAB ) ":" SWS
    const colon = text.indexOf(':', line);
    let nameEnd = colon;
    while (nameEnd > line && isWsp(text.charCodeAt(nameEnd - 1))) nameEnd--;
    const name = colon === -1 || colon > end ? '' : text.slice(line, nameEnd);
    const key = knownHeaderKey(name) ?? (isToken(name) ? headerKey(name) : undefined);
    skipping = key === undefined;
    if (key === undefined) {
      error ??= 'Malformed header line';
      continue;
    }
    names.push(name);
    keys.push(key);
    values.push(trimWsp(text, colon + 1, end));
  }
  return error;
}

/** The Content-Length value, null when absent, or the reason it cannot frame the body. */
export function contentLength(keys: string[], values: string[]): number | null | string {
  let found: number | null = null;
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] !== 'content-length') continue;
    if (found !== null) return 'Multiple Content-Length headers';
    found = parseDigits(values[i]!, MAX_UINT32);
    if (found < 0) return 'Bad Content-Length';
  }
  return found;
}
