// The part of drachtio-srf's internal SIP message class the parser benchmark uses; the package's
// own typings describe only its public API.
declare module 'drachtio-srf/lib/sip-parser/message.js' {
  interface SipUri {
    scheme: string;
    user?: string;
    host?: string;
  }

  class SipMessage {
    /** Parses a whole message from a string; throws if it cannot. */
    constructor(raw: string);
    method?: string;
    uri?: string;
    status?: number;
    body?: string;
    get(header: string): string | undefined;
    getParsedHeader(header: string): unknown;
    static parseUri(uri: string): SipUri | undefined;
  }

  export = SipMessage;
}
