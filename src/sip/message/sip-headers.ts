import { CodedText, type WireRows } from './coded-text.js';
import { BACKSLASH, DQUOTE, isToken, trimWsp } from './grammar.js';
import { canonicalName, headerKey, isListHeader } from './header-names.js';

const NO_ROWS: Iterable<readonly [string, string]> = [];

/**
 * The header rows of a message, in order. Names are case-insensitive and compact forms are
 * the same header as their long form (`v` is `Via`). Values are octet strings (latin1: one
 * char per octet) with line folding replaced by a single SP and surrounding SP/HTAB removed;
 * nothing else is changed, so unknown headers pass through as they came. Values given to
 * set and append are octet strings too: text goes through octetsFromText first.
 */
export class SipHeaders implements Iterable<[name: string, value: string]> {
  #names: string[] = [];
  /** Null while the rows are as the parser read them and their values not all cut out. */
  #values: string[] | null = [];
  #keys: string[] | null = null;
  #typed: Map<string, unknown> | null = null;
  #slots: unknown[] | null = null;
  /** The rows as the parser read them, until they change. */
  #read: ReadRows | null = null;

  constructor(rows: Iterable<readonly [string, string]> = NO_ROWS) {
    if (rows !== NO_ROWS) for (const [name, value] of rows) this.append(name, value);
  }

  /** Rows exactly as the parser read them (names already checked to be tokens). */
  static fromParsedRows(names: string[], values: string[], keys?: string[]): SipHeaders {
    const headers = new SipHeaders();
    headers.#names = names;
    headers.#values = values;
    headers.#keys = keys ?? null;
    return headers;
  }

  /**
   * Rows as the message parser read them: each value is cut out of the text when first asked
   * for (most are never read), and the typed accessors read the octets.
   */
  static fromRead(rows: ReadRows): SipHeaders {
    const headers = new SipHeaders();
    headers.#names = rows.names;
    headers.#keys = rows.keys;
    headers.#values = null;
    headers.#read = rows;
    return headers;
  }

  get size(): number {
    return this.#names.length;
  }

  /** The value of the first row of this header, whole (a list is not split). */
  get(name: string): string | undefined {
    const key = headerKey(name);
    const keys = this.#keyList();
    for (let i = 0; i < keys.length; i++) if (keys[i] === key) return this.#valueAt(i);
    return undefined;
  }

  /** Every value: one per row, and list headers split at their top-level commas. */
  getAll(name: string): string[] {
    const key = headerKey(name);
    const rows = this.#rowsOf(key);
    if (!isListHeader(key)) return rows;
    const out: string[] = [];
    for (const row of rows) splitList(row, out);
    return out;
  }

  /** The value of every row of this header, unsplit. */
  getRows(name: string): string[] {
    return this.#rowsOf(headerKey(name));
  }

  #rowsOf(key: string): string[] {
    const keys = this.#keyList();
    const out: string[] = [];
    for (let i = 0; i < keys.length; i++) if (keys[i] === key) out.push(this.#valueAt(i));
    return out;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** How many rows this header has (several rows of a single-valued header are an error). */
  count(name: string): number {
    const key = headerKey(name);
    let n = 0;
    for (const k of this.#keyList()) if (k === key) n++;
    return n;
  }

  /** Replaces every row of this header with the given values, at the place of the first. */
  set(name: string, value: string | readonly string[]): void {
    const values = typeof value === 'string' ? [value] : value;
    const key = headerKey(checkName(name));
    const keys = this.#keyList();
    let at = keys.indexOf(key);
    if (at === -1) at = keys.length;
    const octets = values.map(toOctets);
    this.remove(name);
    this.#names.splice(at, 0, ...octets.map(() => name));
    this.#valueList().splice(at, 0, ...octets);
    this.#keyList().splice(at, 0, ...octets.map(() => key));
    this.#changed();
  }

  append(name: string, value: string): void {
    const octets = toOctets(value);
    const keys = this.#keyList();
    const values = this.#valueList();
    this.#names.push(checkName(name));
    values.push(octets);
    keys.push(headerKey(name));
    this.#changed();
  }

  /** Removes every row of this header; true when there was one. */
  remove(name: string): boolean {
    const key = headerKey(name);
    const keys = this.#keyList();
    const values = this.#valueList();
    let removed = false;
    for (let i = keys.length - 1; i >= 0; i--) {
      if (keys[i] !== key) continue;
      keys.splice(i, 1);
      this.#names.splice(i, 1);
      values.splice(i, 1);
      removed = true;
    }
    if (removed) this.#changed();
    return removed;
  }

  *[Symbol.iterator](): IterableIterator<[name: string, value: string]> {
    const values = this.#valueList();
    for (let i = 0; i < this.#names.length; i++) yield [this.#names[i]!, values[i]!];
  }

  clone(): SipHeaders {
    return SipHeaders.fromParsedRows(
      [...this.#names],
      [...this.#valueList()],
      [...this.#keyList()],
    );
  }

  /**
   * The typed value of a header, parsed from its rows on first use and kept until the
   * headers change. A parser that throws is asked again next time. `cacheKey` tells apart
   * two readings of one header (the whole Via list, and only its first value).
   */
  typed<T>(name: string, parse: (rows: string[]) => T, cacheKey?: string): T {
    const key = headerKey(name);
    const cached = this.#typed?.get(cacheKey ?? key);
    if (cached !== undefined) return cached as T;
    const value = parse(this.#rowsOf(key));
    (this.#typed ??= new Map()).set(cacheKey ?? key, value);
    return value;
  }

  /**
   * For the message's own accessors: `typed` with a numbered slot for a cache and the key
   * already known.
   */
  cached<T>(slot: number, key: string, parse: (rows: string[], wire?: WireRows) => T): T {
    const slots = this.#slots;
    if (slots !== null) {
      const cached = slots[slot];
      if (cached !== undefined) return cached as T;
    }
    const value = this.#read === null ? parse(this.#rowsOf(key)) : this.#parseRead(key, parse);
    (this.#slots ??= [])[slot] = value;
    return value;
  }

  /** Gives `parse` the rows of `key` with their codes in the octets they were read from. */
  #parseRead<T>(key: string, parse: (rows: string[], wire?: WireRows) => T): T {
    const read = this.#read!;
    const keys = this.#keyList();
    // Most headers have one row: arrays made for it hold just that, rather than room to grow.
    let rows: string[] | null = null;
    let wire: (CodedText | null)[] = [];
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] !== key) continue;
      const value = this.#valueAt(i);
      const start = read.starts[i]!;
      const coded = start < 0 ? null : new CodedText(value, read.octets, read.base + start);
      if (rows === null) {
        rows = [value];
        wire = [coded];
      } else {
        rows.push(value);
        wire.push(coded);
      }
    }
    return parse(rows ?? [], wire);
  }

  /**
   * The head text of these rows: canonical names, one row per line, each ending in CRLF. The
   * Content-Length rows are replaced by one row carrying `contentLength`, in the place of the
   * first (or at the end when there was none).
   */
  format(contentLength: number): string {
    const keys = this.#keyList();
    let out = '';
    let lengthWritten = false;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (key === 'content-length') {
        if (!lengthWritten) out += `Content-Length: ${contentLength}\r\n`;
        lengthWritten = true;
        continue;
      }
      const value = this.#valueAt(i);
      const name = canonicalName(key, this.#names[i]!);
      out += value.length === 0 ? `${name}:\r\n` : `${name}: ${value}\r\n`;
    }
    if (!lengthWritten) out += `Content-Length: ${contentLength}\r\n`;
    return out;
  }

  #keyList(): string[] {
    if (this.#keys === null) this.#keys = this.#names.map(headerKey);
    return this.#keys;
  }

  #valueAt(i: number): string {
    return this.#values === null ? rowValue(this.#read!, i) : this.#values[i]!;
  }

  /** Every value, cut out of the text read if they were not yet. */
  #valueList(): string[] {
    if (this.#values === null) {
      const read = this.#read!;
      this.#values = read.names.map((_, i) => rowValue(read, i));
    }
    return this.#values;
  }

  #changed(): void {
    this.#typed = null;
    this.#slots = null;
    this.#read = null;
  }
}

/** Header rows as the message parser reads them. */
export interface ReadRows {
  names: string[];
  /** headerKey of each name. */
  keys: string[];
  /** The text read, and the octets it was read from: char i is octets[base + i]. */
  text: string;
  octets: Uint8Array;
  base: number;
  /**
   * Where each value starts and ends in the text, without the SP/HTAB around it; a start of
   * -1 for a value that is no run of the text (an unfolded one), kept in `unfolded`.
   */
  starts: number[];
  ends: number[];
  unfolded: Map<number, string> | null;
}

/** The value of row `i` of rows read. */
export function rowValue(rows: ReadRows, i: number): string {
  const start = rows.starts[i]!;
  return start < 0 ? rows.unfolded!.get(i)! : rows.text.slice(start, rows.ends[i]);
}

function checkName(name: string): string {
  if (!isToken(name))
    throw new TypeError(`Expected a header name (a token) but received "${name}"`);
  return name;
}

/** A value to store: octets, without line breaks, trimmed. */
function toOctets(value: string): string {
  if (/[\r\n]/.test(value)) {
    throw new TypeError('Expected a header value without CR or LF');
  }
  if (/[^\x00-\xff]/.test(value)) {
    throw new TypeError('Expected a header value of octets (use octetsFromText for text)');
  }
  return trimWsp(value);
}

/**
 * Splits a list value at its commas, except within quoted strings and angle brackets, and
 * leaves out empty elements (RFC 3261 7.3.1: a comma-separated list).
 */
export function splitList(value: string, out: string[] = []): string[] {
  let start = 0;
  let inQuotes = false;
  let inAngles = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (inQuotes) {
      if (c === BACKSLASH) i++;
      else if (c === DQUOTE) inQuotes = false;
    } else if (c === DQUOTE) inQuotes = true;
    else if (c === 0x3c /* < */) inAngles = true;
    else if (c === 0x3e /* > */) inAngles = false;
    else if (c === 0x2c /* , */ && !inAngles) {
      pushElement(value, start, i, out);
      start = i + 1;
    }
  }
  pushElement(value, start, value.length, out);
  return out;
}

function pushElement(value: string, from: number, to: number, out: string[]): void {
  const element = trimWsp(value, from, to);
  if (element.length > 0) out.push(element);
}
