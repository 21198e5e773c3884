import { CodedText } from './coded-text.js';
import { BACKSLASH, DQUOTE, TOKEN } from './grammar.js';
import { SipParseError } from './sip-parse-error.js';

/**
 * A cursor over one unfolded header value, for the header parsers. LWS has already been
 * reduced to SP/HTAB by unfolding, so SWS here is any run of SP/HTAB. Chars are read through
 * the value's codes (see CodedText): the octets it was read from, or a copy of a given text.
 */
export class ValueScanner extends CodedText {
  pos = 0;
  /** Whether the last quoted-string read held only ASCII. */
  quotedAscii = true;

  constructor(
    value: CodedText | string,
    /** Canonical name of the header being read, for the error reason. */
    readonly header: string,
  ) {
    const source = typeof value === 'string' ? CodedText.of(value) : value;
    super(source.text, source.codes, source.base);
  }

  get atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  /** The char code at the cursor, or -1 at the end. */
  peek(): number {
    return this.at(this.pos);
  }

  skipWs(): void {
    this.pos = this.skipWsp(this.pos);
  }

  /** Skips SWS, then reports (and consumes) whether the next char is `code`. */
  consume(code: number): boolean {
    this.skipWs();
    if (this.peek() !== code) return false;
    this.pos++;
    return true;
  }

  /** Skips SWS, requires `code`, and skips SWS after it (SEMI, COMMA, EQUAL, SLASH, COLON). */
  expect(code: number): void {
    if (!this.consume(code)) this.fail();
    this.skipWs();
  }

  /** Reads 1*token; fails when there is none. */
  token(): string {
    const start = this.pos;
    this.pos = this.classEnd(start, TOKEN);
    if (this.pos === start) this.fail();
    return this.text.slice(start, this.pos);
  }

  /** Reads until SP, HTAB, ";" or "," (or the end); the run may be empty. */
  untilDelimiter(): string {
    const { text, codes, base } = this;
    const start = this.pos;
    let i = start;
    for (; i < text.length; i++) {
      const c = codes[base + i]!;
      if (c === 0x3b || c === 0x2c || c === 0x20 || c === 0x09) break;
    }
    this.pos = i;
    return text.slice(start, i);
  }

  /** Reads a quoted-string at the cursor and returns its content with quoted-pairs resolved. */
  quoted(): string {
    if (this.peek() !== DQUOTE) this.fail();
    const { text, codes, base } = this;
    let i = this.pos + 1;
    let out = '';
    let from = i;
    let ascii = true;
    for (; i < text.length; i++) {
      const c = codes[base + i]!;
      if (c > 0x7f) {
        ascii = false;
      } else if (c === DQUOTE) {
        this.quotedAscii = ascii;
        this.pos = i + 1;
        return out + text.slice(from, i);
      }
      if (c === BACKSLASH) {
        // quoted-pair = "\" (%x00-09 / %x0B-0C / %x0E-7F)
        const next = this.at(i + 1);
        if (!(next >= 0 && next <= 0x7f) || next === 0x0a || next === 0x0d) break;
        out += text.slice(from, i) + text[i + 1];
        i++;
        from = i + 1;
      } else if (c < 0x20 && c !== 0x09) {
        break; // qdtext excludes control characters
      } else if (c === 0x7f) {
        break;
      }
    }
    return this.fail();
  }

  /** Reads a quoted-string and returns it as written, quotes and backslashes included. */
  rawQuoted(): string {
    const start = this.pos;
    this.quoted();
    return this.text.slice(start, this.pos);
  }

  failAt(pos: number): never {
    this.pos = pos;
    return this.fail();
  }

  fail(): never {
    throw new SipParseError(`Malformed ${this.header} header`, { header: this.header });
  }
}
