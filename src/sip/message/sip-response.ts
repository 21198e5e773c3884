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
    return `${this.version} ${this.status} ${octetsFromText(this.reason)}`;
  }

  protected contextMethod(): null {
    return null;
  }
}
