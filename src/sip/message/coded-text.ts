import { classOf } from './grammar.js';

/** Char codes, one per char of a text: the octets of a message, or a text's own copy. */
export type CharCodes = Uint8Array | Uint16Array;

/**
 * A text together with its char codes: `codes[base + i]` is `text.charCodeAt(i)`.
 *
 * The parsers read message text as latin1 strings (one char per octet), so a value read off
 * the wire has its codes in the message's own octets, at the offset it was read from. Indexing
 * those octets costs about a third of what charCodeAt does, so the header parsers scan chars
 * through this and keep the string only for slicing out what they return. A text that did not
 * come straight from the octets (an unfolded value, one the application set) gets a copy.
 */
export class CodedText {
  constructor(
    readonly text: string,
    readonly codes: CharCodes,
    /** Where the text's first char is in `codes`. */
    readonly base: number,
  ) {}

  /** A text with its own copy of the char codes (UTF-16 code units, so nothing is lost). */
  static of(text: string): CodedText {
    const codes = new Uint16Array(text.length);
    for (let i = 0; i < text.length; i++) codes[i] = text.charCodeAt(i);
    return new CodedText(text, codes, 0);
  }

  get length(): number {
    return this.text.length;
  }

  /** The char code at `i` (0 <= i), or -1 past the end. */
  at(i: number): number {
    return i < this.text.length ? this.codes[this.base + i]! : -1;
  }

  /** The part from `from` to `to`, with the same codes. */
  part(from: number, to: number): CodedText {
    return new CodedText(this.text.slice(from, to), this.codes, this.base + from);
  }

  /** The index of the first char at or after `from` that is not SP or HTAB. */
  skipWsp(from: number): number {
    const { codes, base } = this;
    const end = this.text.length;
    while (from < end) {
      const c = codes[base + from]!;
      if (c !== 0x20 && c !== 0x09) break;
      from++;
    }
    return from;
  }

  /** The index of the first char at or after `from` that is not of the class. */
  classEnd(from: number, flag: number): number {
    const { codes, base } = this;
    const end = this.text.length;
    while (from < end && (classOf(codes[base + from]!) & flag) !== 0) from++;
    return from;
  }

  /** True when every char of [from, to) belongs to the class and the range is not empty. */
  allOfClass(flag: number, from = 0, to = this.text.length): boolean {
    if (from >= to) return false;
    const { codes, base } = this;
    for (let i = from; i < to; i++) if ((classOf(codes[base + i]!) & flag) === 0) return false;
    return true;
  }
}

/**
 * The rows of one header as codes, for the parsers: each row with its octets when it was read
 * off the wire verbatim, null when it was not (folded, or set by the application).
 */
export type WireRows = readonly (CodedText | null)[];
