import { octetsFromText } from './octets.js';
import { SipMessage, type SipMessageInit } from './sip-message.js';

export interface SipResponseInit extends SipMessageInit {
  /** 100 to 699. */
  status: number;
  /** Text for people; written as UTF-8. */
  reason?: string;
}

/** A SIP response (RFC 3261 7.2). */
export class SipResponse extends SipMessage {
  status: number;
  reason: string;

  constructor(init: SipResponseInit) {
    super(init);
    this.status = init.status;
    this.reason = init.reason ?? '';
  }

  get isRequest(): false {
    return false;
  }

  startLine(): string {
    // Status-Code = 3DIGIT (RFC 3261 7.2: 100 to 699); the Reason-Phrase holds no CR or LF.
    if (!Number.isInteger(this.status) || this.status < 100 || this.status > 699) {
      throw new TypeError(`Expected a status between 100 and 699 but received ${this.status}`);
    }
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(this.reason)) {
      throw new TypeError('Expected a reason phrase without control characters');
    }
    return `${this.version} ${this.status} ${octetsFromText(this.reason)}`;
  }

  protected contextMethod(): null {
    return null;
  }
}
