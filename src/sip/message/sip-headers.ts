import { BACKSLASH, DQUOTE, isToken, trimWsp } from './grammar.js';
import { canonicalName, headerKey, isListHeader } from './header-names.js';

/**
 * The header rows of a message, in order. Names are case-insensitive and compact forms are
 * the same header as their long form (`v` is `Via`). Values are octet strings (latin1: one
 * char per octet) with line folding replaced by a single SP and surrounding SP/HTAB removed;
 * nothing else is changed, so unknown headers pass through as they came. Values given to
 * set and append are octet strings too: text goes through octetsFromText first.
 */
export class SipHeaders implements Iterable<[name: string, value: string]> {
  #names: string[];
  #values: string[];
  #keys: string[] | null = null;
  #typed: Map<string, unknown> | null = null;
  #slots: unknown[] | null = null;

  constructor(rows: Iterable<readonly [string, string]> = []) {
    this.#names = [];
    this.#values = [];
    for (const [name, value] of rows) this.append(name, value);
  }

  /** Rows exactly as the parser read them (names already checked to be tokens). */
  static fromParsedRows(names: string[], values: string[], keys?: string[]): SipHeaders {
    const headers = new SipHeaders();
    headers.#names = names;
    headers.#values = values;
    headers.#keys = keys ?? null;
    return headers;
  }

  get size(): number {
    return this.#names.length;
  }

  /** The value of the first row of this header, whole (a list is not split). */
  get(name: string): string | undefined {
    const key = headerKey(name);
    const keys = this.#keyList();
    for (let i = 0; i < keys.length; i++) if (keys[i] === key) return this.#values[i];
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
    for (let i = 0; i < keys.length; i++) if (keys[i] === key) out.push(this.#values[i]!);
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
    this.#values.splice(at, 0, ...octets);
    this.#keyList().splice(at, 0, ...octets.map(() => key));
    this.#changed();
  }

  append(name: string, value: string): void {
    const octets = toOctets(value);
    const keys = this.#keyList();
    this.#names.push(checkName(name));
    this.#values.push(octets);
    keys.push(headerKey(name));
    this.#changed();
  }

  /** Removes every row of this header; true when there was one. */
  remove(name: string): boolean {
    const key = headerKey(name);
    const keys = this.#keyList();
    let removed = false;
    for (let i = keys.length - 1; i >= 0; i--) {
      if (keys[i] !== key) continue;
      keys.splice(i, 1);
      this.#names.splice(i, 1);
      this.#values.splice(i, 1);
      removed = true;
    }
    if (removed) this.#changed();
    return removed;
  }

  *[Symbol.iterator](): IterableIterator<[name: string, value: string]> {
    for (let i = 0; i < this.#names.length; i++) yield [this.#names[i]!, this.#values[i]!];
  }

  clone(): SipHeaders {
    return SipHeaders.fromParsedRows([...this.#names], [...this.#values], [...this.#keyList()]);
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
  cached<T>(slot: number, key: string, parse: (rows: string[]) => T): T {
    const slots = this.#slots;
    if (slots !== null) {
      const cached = slots[slot];
      if (cached !== undefined) return cached as T;
    }
    const value = parse(this.#rowsOf(key));
    (this.#slots ??= [])[slot] = value;
    return value;
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
      const value = this.#values[i]!;
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

  #changed(): void {
    this.#typed = null;
    this.#slots = null;
  }
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
