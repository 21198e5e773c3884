import { TOKEN, classOf, isToken, isWsp, parseDigits, trimWsp } from './grammar.js';
import { headerKey, knownHeaderKey, knownNameIn, packName } from './header-names.js';
import { MAX_UINT32 } from './scalar-headers.js';
import { type ReadRows, rowValue } from './sip-headers.js';

/** The head of a message, split into its start line and unfolded header rows. */
export interface Head extends ReadRows {
  /** The first line, which begins at octets[base]. */
  startLine: string;
  /** Where the body starts, or -1 when the head has no end (no empty line). */
  bodyStart: number;
  /** The first reason a row was left out, or null. */
  rowError: string | null;
}

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');

/** Octets read as text in one go: enough for the whole of nearly every message. */
const WINDOW = 4096;

/**
 * Splits the head into its start line and header rows, unfolding continuation lines. Reads
 * at most `limit` octets; a malformed row is left out and reported, the others kept.
 */
export function readHead(data: Buffer, limit: number): Head {
  let start = 0;
  // RFC 3261 7.5: CRLFs before the start line are ignored.
  while (start + 1 < limit && data[start] === 0x0d && data[start + 1] === 0x0a) start += 2;
  return readWindow(data, start, limit) ?? readWhole(data, start, limit);
}

/**
 * The head, when it ends within WINDOW octets of `start`; null when it does not. The end of
 * the head is found while the rows are split, rather than by a search of its own first.
 */
function readWindow(data: Buffer, start: number, limit: number): Head | null {
  // Latin1 maps octet to char one to one: char i of the text is data[start + i].
  const text = data.toString('latin1', start, Math.min(limit, start + WINDOW));
  const lineEnd = text.indexOf('\r\n');
  if (lineEnd === -1) return null;
  const head = emptyHead(text.slice(0, lineEnd), text, data, start);
  const reader = new RowReader(head);
  head.rowError = reader.read(lineEnd + 2, true);
  if (reader.emptyLine === -1) return null;
  head.bodyStart = start + reader.emptyLine + 2;
  return checkStartLine(head);
}

/** The head, found by searching for its end first (a long head, or one without an end). */
function readWhole(data: Buffer, start: number, limit: number): Head {
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
  const head = emptyHead(text.slice(0, lineEnd), text, data, start);
  head.bodyStart = bodyStart;
  head.rowError = new RowReader(head).read(lineEnd + 2, false);
  return checkStartLine(head);
}

function emptyHead(startLine: string, text: string, octets: Buffer, start: number): Head {
  return {
    startLine,
    names: [],
    keys: [],
    text,
    octets,
    base: start,
    starts: [],
    ends: [],
    unfolded: null,
    bodyStart: -1,
    rowError: null,
  };
}

function checkStartLine(head: Head): Head {
  // RFC 3261 7: lines end in CRLF; a CR or LF anywhere else is not SIP.
  if (hasLineBreak(head.startLine, 0, head.startLine.length)) head.rowError ??= 'Bad line ending';
  return head;
}

function hasLineBreak(text: string, from: number, to: number): boolean {
  const cr = text.indexOf('\r', from);
  const lf = text.indexOf('\n', from);
  return (cr !== -1 && cr < to) || (lf !== -1 && lf < to);
}

/**
 * Reads the header rows of a head's text, each line ending in CRLF. Line ends are found with
 * indexOf (a native search); names and the spaces around values are scanned in the octets,
 * which costs a third of what charCodeAt does.
 */
class RowReader {
  #error: string | null = null;
  #skipping = false;
  /** Where the empty line ending the head starts, once read with `toEmptyLine`. */
  emptyLine = -1;
  readonly text: string;
  /** The message: char i of the text is octets[base + i]. */
  readonly octets: Uint8Array;
  readonly base: number;

  constructor(readonly rows: ReadRows) {
    this.text = rows.text;
    this.octets = rows.octets;
    this.base = rows.base;
  }

  /**
   * Reads the rows from `pos` to the end of the text, or with `toEmptyLine` to the empty line
   * that ends the head (the text goes on with the body); returns the first row error.
   */
  read(pos: number, toEmptyLine: boolean): string | null {
    const { text, octets, base } = this;
    while (pos < text.length) {
      // Each line starts after an LF: CR LF then CR LF is the end of the head.
      if (toEmptyLine && text.charCodeAt(pos) === 0x0d && text.charCodeAt(pos + 1) === 0x0a) {
        if (text.charCodeAt(pos - 2) === 0x0d) {
          this.emptyLine = pos;
          break;
        }
      }
      let end = text.indexOf('\n', pos) - 1;
      if (end < 0) end = text.length;
      const line = pos;
      pos = end + 2;
      if (end === text.length || octets[base + end] !== 0x0d || text.indexOf('\r', line) !== end) {
        this.#error ??= 'Bad line ending';
        this.#skipping = true;
      } else if (isWsp(octets[base + line]!)) {
        this.#continuation(line, end);
      } else if (!this.#plainRow(line, end)) {
        this.#row(line, end);
      }
    }
    return this.#error;
  }

  /**
   * RFC 3261 7.3.1: a line starting with SP or HTAB continues the header value above, and the
   * folding counts as a single SP.
   */
  #continuation(line: number, end: number): void {
    const rows = this.rows;
    if (rows.names.length === 0 || this.#skipping) {
      this.#error ??= 'Malformed header line';
      return;
    }
    const more = trimWsp(this.text, line, end);
    const last = rows.names.length - 1;
    const before = rowValue(rows, last);
    const value = before.length === 0 ? more : more.length === 0 ? before : `${before} ${more}`;
    // The value is no longer a run of the text.
    (rows.unfolded ??= new Map()).set(last, value);
    rows.starts[last] = -1;
  }

  /**
   * The row when it has the usual form, token *(SP / HTAB) ":", read in the octets; false
   * for any other, left to #row.
   */
  #plainRow(line: number, end: number): boolean {
    const { octets, base } = this;
    let i = line;
    let first4 = 0;
    let next4 = 0;
    for (; i < end; i++) {
      const c = octets[base + i]!;
      if ((classOf(c) & TOKEN) === 0) break;
      if (i - line < 4) first4 = packName(first4, c);
      else if (i - line < 8) next4 = packName(next4, c);
    }
    const nameEnd = i;
    while (i < end && isWsp(octets[base + i]!)) i++;
    if (nameEnd === line || i === end || octets[base + i] !== 0x3a /* : */) return false;
    // Written as most names are: the shared strings stand for the octets read.
    const known = knownNameIn(octets, base + line, base + nameEnd, first4, next4);
    const name = known?.name ?? this.text.slice(line, nameEnd);
    this.#push(name, known?.key ?? headerKey(name), i + 1, end);
    return true;
  }

  /** header-name HCOLON header-value, HCOLON = *( SP / HTAB ) ":" SWS */
  #row(line: number, end: number): void {
    const text = this.text;
    const colon = text.indexOf(':', line);
    let nameEnd = colon;
    while (nameEnd > line && isWsp(text.charCodeAt(nameEnd - 1))) nameEnd--;
    const name = colon === -1 || colon > end ? '' : text.slice(line, nameEnd);
    const key = knownHeaderKey(name) ?? (isToken(name) ? headerKey(name) : undefined);
    this.#skipping = key === undefined;
    if (key === undefined) {
      this.#error ??= 'Malformed header line';
      return;
    }
    this.#push(name, key, colon + 1, end);
  }

  /** Adds a row whose value is text[from, to) without the SP/HTAB around it. */
  #push(name: string, key: string, from: number, to: number): void {
    const { octets, base } = this;
    while (from < to && isWsp(octets[base + from]!)) from++;
    while (to > from && isWsp(octets[base + to - 1]!)) to--;
    this.#skipping = false;
    this.rows.names.push(name);
    this.rows.keys.push(key);
    this.rows.starts.push(from);
    this.rows.ends.push(to);
  }
}

/** The Content-Length value, null when absent, or the reason it cannot frame the body. */
export function contentLength(rows: ReadRows): number | null | string {
  let found: number | null = null;
  for (let i = 0; i < rows.keys.length; i++) {
    if (rows.keys[i] !== 'content-length') continue;
    if (found !== null) return 'Multiple Content-Length headers';
    found = parseDigits(rowValue(rows, i), MAX_UINT32);
    if (found < 0) return 'Bad Content-Length';
  }
  return found;
}
