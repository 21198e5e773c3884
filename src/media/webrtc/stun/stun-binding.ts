import { randomBytes } from 'node:crypto';
import {
  errorCodeValue,
  STUN_ATTRIBUTE,
  uint32Value,
  uint64Value,
  unknownAttributesValue,
} from './stun-attributes.js';
import {
  encodeStunMessage,
  STUN_METHOD_BINDING,
  type StunAttribute,
  type StunMessage,
} from './stun-message.js';
import { xorAddressValue, type TransportAddress } from './xor-address.js';

/** What an ICE connectivity check carries (RFC 8445 7.2.2, 16.1). */
export interface BindingRequestFields {
  /** "<receiver's ufrag>:<sender's ufrag>". */
  readonly username: string;
  /** The receiver's ICE password: a check is signed with the password of the agent it goes to. */
  readonly key: Buffer;
  readonly priority: number;
  readonly useCandidate?: boolean;
  /** The sender's role and its tie-breaker. */
  readonly role: 'controlling' | 'controlled';
  readonly tieBreaker: bigint;
  readonly transactionId?: Buffer;
}

/** A connectivity check, as a full agent (a browser) sends it; the lite side never sends one. */
export function bindingRequest(fields: BindingRequestFields): Buffer {
  const attributes: StunAttribute[] = [
    { type: STUN_ATTRIBUTE.USERNAME, value: Buffer.from(fields.username, 'utf8') },
    { type: STUN_ATTRIBUTE.PRIORITY, value: uint32Value(fields.priority) },
    {
      type:
        fields.role === 'controlling'
          ? STUN_ATTRIBUTE.ICE_CONTROLLING
          : STUN_ATTRIBUTE.ICE_CONTROLLED,
      value: uint64Value(fields.tieBreaker),
    },
  ];
  if (fields.useCandidate) {
    attributes.push({ type: STUN_ATTRIBUTE.USE_CANDIDATE, value: Buffer.alloc(0) });
  }
  const message: StunMessage = {
    method: STUN_METHOD_BINDING,
    messageClass: 'request',
    transactionId: fields.transactionId ?? randomBytes(12),
    attributes,
  };
  return encodeStunMessage(message, { integrityKey: fields.key, fingerprint: true });
}

/**
 * RFC 8445 7.3.1.1 and RFC 8489 9.1.3: the success response to a check, with the source
 * address of the request in XOR-MAPPED-ADDRESS, signed with the key that checked the request.
 */
export function bindingSuccess(
  request: StunMessage,
  source: TransportAddress,
  key: Buffer,
): Buffer {
  const mapped = xorAddressValue(source, request.transactionId);
  return encodeStunMessage(
    {
      method: request.method,
      messageClass: 'success',
      transactionId: request.transactionId,
      attributes: [{ type: STUN_ATTRIBUTE.XOR_MAPPED_ADDRESS, value: mapped }],
    },
    { integrityKey: key, fingerprint: true },
  );
}

export interface BindingErrorOptions {
  /** Signs the response: only for a request whose integrity was checked (RFC 8489 9.1.3). */
  readonly key?: Buffer;
  /** The types a 420 names in UNKNOWN-ATTRIBUTES. */
  readonly unknown?: readonly number[];
}

/** An error response to a request, with ERROR-CODE and its reason phrase. */
export function bindingError(
  request: StunMessage,
  code: number,
  options: BindingErrorOptions = {},
): Buffer {
  const attributes: StunAttribute[] = [
    { type: STUN_ATTRIBUTE.ERROR_CODE, value: errorCodeValue(code) },
  ];
  if (options.unknown !== undefined && options.unknown.length > 0) {
    attributes.push({
      type: STUN_ATTRIBUTE.UNKNOWN_ATTRIBUTES,
      value: unknownAttributesValue(options.unknown),
    });
  }
  return encodeStunMessage(
    {
      method: request.method,
      messageClass: 'error',
      transactionId: request.transactionId,
      attributes,
    },
    { ...(options.key === undefined ? {} : { integrityKey: options.key }), fingerprint: true },
  );
}
