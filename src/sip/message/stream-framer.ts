import { contentLength, readHead } from './message-head.js';
import { DEFAULT_MAX_SIZE } from './message-parser.js';
import { SipParseError } from './sip-parse-error.js';

/**
 * What a stream yields:
 * - `message`: the octets of one whole message, to give to parseMessage with
 *   `streamed: true`.
 * - `ping`: a double CRLF between messages (RFC 5626 3.5.1 keep-alive); answer with a pong,
 *   a single CRLF.
 * - `pong`: a single CRLF between messages. A ping split across two chunks shows as a pong
 *   then a ping, so a client waiting for a pong is never kept waiting.
 * - `error`: the stream cannot be framed any more (no or bad Content-Length, or a message
 *   over the maximum size); close the connection. Nothing more is yielded after it.
 */
export type FramedItem =
  | { readonly kind: 'message'; readonly data: Buffer }
  | { readonly kind: 'ping' }
  | { readonly kind: 'pong' }
  | { readonly kind: 'error'; readonly error: SipParseError };

export interface SipStreamFramerOptions {
  /** Largest message accepted, in octets (65535 unless given); also bounds buffering. */
  maxSize?: number;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const EMPTY = Buffer.alloc(0);

/**
 * Cuts a TCP or TLS byte stream into SIP messages by Content-Length (RFC 3261 18.3) and
 * picks out CRLF keep-alives. It never holds more than the maximum message size.
 */
export class SipStreamFramer {
  readonly #maxSize: number;
  #pending: Buffer = EMPTY;
  /** How far the pending octets were searched for the end of the head. */
  #searched = 0;
  /** A single CRLF was the last thing seen between messages. */
  #afterLoneCrlf = false;
  #failed = false;

  constructor(options: SipStreamFramerOptions = {}) {
    this.#maxSize = options.maxSize ?? DEFAULT_MAX_SIZE;
  }

  /** Octets held waiting for the rest of a message. */
  get buffered(): number {
    return this.#pending.length;
  }

  push(chunk: Buffer): FramedItem[] {
    if (this.#failed) return [];
    let data = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const items: FramedItem[] = [];
    for (;;) {
      data = this.#keepalives(data, items);
      if (data.length === 0) break;
      const size = this.#messageSize(data);
      if (typeof size !== 'number') {
        if (size !== null) return this.#fail(items, size);
        break;
      }
      if (size > data.length) break;
      items.push({ kind: 'message', data: data.subarray(0, size) });
      data = data.subarray(size);
      this.#searched = 0;
    }
    if (data.length > this.#maxSize) return this.#fail(items, 'Message too large');
    this.#pending = data;
    return items;
  }

  /** Consumes the CRLFs before a start line, yielding pings and pongs. */
  #keepalives(data: Buffer, items: FramedItem[]): Buffer {
    let i = 0;
    while (i + 1 < data.length && data[i] === 0x0d && data[i + 1] === 0x0a) {
      if (this.#afterLoneCrlf) {
        items.push({ kind: 'ping' });
        this.#afterLoneCrlf = false;
        i += 2;
      } else if (data[i + 2] === 0x0d && data[i + 3] === 0x0a) {
        items.push({ kind: 'ping' });
        i += 4;
      } else if (i + 2 === data.length || (i + 3 === data.length && data[i + 2] === 0x0d)) {
        items.push({ kind: 'pong' });
        this.#afterLoneCrlf = true;
        i += 2;
      } else {
        items.push({ kind: 'pong' });
        i += 2;
      }
    }
    if (i < data.length && !(i + 1 === data.length && data[i] === 0x0d)) {
      this.#afterLoneCrlf = false;
    }
    return i === 0 ? data : data.subarray(i);
  }

  /**
   * The size of the message at the start of `data`: a number once the head is complete, null
   * while it is not, or the reason the stream cannot be framed.
   */
  #messageSize(data: Buffer): number | string | null {
    const end = data.indexOf(HEAD_END, Math.max(0, this.#searched - 3));
    if (end === -1) {
      this.#searched = data.length;
      return data.length > this.#maxSize ? 'Message too large' : null;
    }
    const head = readHead(data.subarray(0, end + 4), end + 4);
    const length = contentLength(head);
    if (typeof length === 'string') return length;
    // RFC 3261 18.3: stream-oriented transports MUST use Content-Length.
    if (length === null) return 'Missing Content-Length';
    const size = end + 4 + length;
    return size > this.#maxSize ? 'Message too large' : size;
  }

  #fail(items: FramedItem[], reason: string): FramedItem[] {
    this.#failed = true;
    this.#pending = EMPTY;
    const kind = reason === 'Message too large' ? 'too-large' : 'malformed';
    items.push({ kind: 'error', error: new SipParseError(reason, { kind }) });
    return items;
  }
}
