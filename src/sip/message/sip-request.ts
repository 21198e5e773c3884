import type { CodedText } from './coded-text.js';
import { isToken } from './grammar.js';
import { SipMessage, type SipMessageInit } from './sip-message.js';
import { SipParseError } from './sip-parse-error.js';
import { type AbsoluteUri, type SipUri, parseAddressUri, readAddressUri } from './sip-uri.js';

export interface SipRequestInit extends SipMessageInit {
  /** A token (RFC 3261 25.1); case-sensitive. */
  method: string;
  /** The Request-URI as written on the request line. */
  uri: string;
}

/** A SIP request (RFC 3261 7.1). */
export class SipRequest extends SipMessage {
  method: string;
  uri: string;
  #parsedText: string | null = null;
  #parsed: SipUri | AbsoluteUri | null = null;
  /** The Request-URI with its octets, as the message parser read it. */
  #wireUri: CodedText | null = null;

  constructor(init: SipRequestInit) {
    super(init);
    this.method = init.method;
    this.uri = init.uri;
  }

  /** A request as the message parser read it: `uri` is the Request-URI with its octets. */
  static fromWire(init: SipRequestInit, uri: CodedText): SipRequest {
    const request = new SipRequest(init);
    request.#wireUri = uri;
    return request;
  }

  get isRequest(): true {
    return true;
  }

  /**
   * The Request-URI parsed: a SipUri for sip and sips, else the scheme and text of an
   * absoluteURI (a UAS answers those it does not support with 416, RFC 3261 8.2.2.1).
   */
  requestUri(): SipUri | AbsoluteUri {
    if (this.#parsed === null || this.#parsedText !== this.uri) {
      try {
        // The octets stand for the text as long as the application has not changed it.
        const wire = this.#wireUri;
        this.#parsed =
          wire !== null && wire.text === this.uri
            ? readAddressUri(wire, 'Request-URI')
            : parseAddressUri(this.uri, 'Request-URI');
      } catch (error) {
        throw error instanceof SipParseError ? error.inMessage(true, this.method) : error;
      }
      this.#parsedText = this.uri;
    }
    return this.#parsed;
  }

  startLine(): string {
    // Request-Line = Method SP Request-URI SP SIP-Version: nothing written may break it.
    if (!isToken(this.method)) {
      throw new TypeError(`Expected a token for the method but received "${this.method}"`);
    }
    if (this.uri.length === 0 || /[ \t\r\n]/.test(this.uri)) {
      throw new TypeError(`Expected a Request-URI without whitespace but received "${this.uri}"`);
    }
    return `${this.method} ${this.uri} ${this.version}`;
  }

  protected contextMethod(): string {
    return this.method;
  }
}
