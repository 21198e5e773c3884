/**
 * The SIP message layer (RFC 3261 sections 7, 18.3, 20 and 25): parse and write requests and
 * responses, typed access to their headers, URIs and addresses, and stream framing.
 */
export { type AuthValue } from './auth-value.js';
export { type ContentType } from './content-type.js';
export { canonicalName, headerKey, isListHeader } from './header-names.js';
export { DEFAULT_MAX_SIZE, type ParseOptions, parseMessage } from './message-parser.js';
export { validateRequest, validateResponse } from './message-validation.js';
export {
  type NameAddr,
  type NameAddrInit,
  formatNameAddr,
  parseNameAddr,
  parseNameAddrList,
} from './name-addr.js';
export { detached, octetsFromText, textFromOctets } from './octets.js';
export { type CSeq } from './scalar-headers.js';
export { SipHeaders, splitList } from './sip-headers.js';
export { SIP_VERSION, SipMessage, type SipMessageInit } from './sip-message.js';
export {
  type PartialMessage,
  SipParseError,
  type SipParseErrorKind,
  claimsSip,
  rejectionStatus,
} from './sip-parse-error.js';
export { SipRequest, type SipRequestInit } from './sip-request.js';
export { SipResponse, type SipResponseInit } from './sip-response.js';
export {
  type AbsoluteUri,
  type SipUri,
  type SipUriInit,
  formatUri,
  isSipUri,
  parseAddressUri,
  parseUri,
} from './sip-uri.js';
export { type FramedItem, SipStreamFramer, type SipStreamFramerOptions } from './stream-framer.js';
export { type Via, parseViaList } from './via.js';
