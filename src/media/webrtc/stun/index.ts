export {
  errorCodeValue,
  isComprehensionRequired,
  readErrorCode,
  readUint32,
  readUint64,
  readUnknownAttributes,
  STUN_ATTRIBUTE,
  STUN_ERROR_REASON,
  UNDERSTOOD_IN_BINDING,
  uint32Value,
  uint64Value,
  type StunErrorCode,
} from './stun-attributes.js';
export {
  bindingError,
  bindingRequest,
  bindingSuccess,
  type BindingErrorOptions,
  type BindingRequestFields,
} from './stun-binding.js';
export {
  attributeValue,
  encodeStunMessage,
  hasValidFingerprint,
  hasValidIntegrity,
  isStunDatagram,
  MAGIC_COOKIE,
  parseStunMessage,
  STUN_METHOD_BINDING,
  type ReceivedStunMessage,
  type StunAttribute,
  type StunClass,
  type StunEncodeOptions,
  type StunMessage,
} from './stun-message.js';
export { StunParseError } from './stun-parse-error.js';
export { readXorAddress, xorAddressValue, type TransportAddress } from './xor-address.js';
