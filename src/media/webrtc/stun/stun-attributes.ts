/** STUN attribute types (RFC 8489 18.3, RFC 8445 16.1) that voxgate reads or writes. */
export const STUN_ATTRIBUTE = {
  MAPPED_ADDRESS: 0x0001,
  USERNAME: 0x0006,
  MESSAGE_INTEGRITY: 0x0008,
  ERROR_CODE: 0x0009,
  UNKNOWN_ATTRIBUTES: 0x000a,
  REALM: 0x0014,
  NONCE: 0x0015,
  MESSAGE_INTEGRITY_SHA256: 0x001c,
  XOR_MAPPED_ADDRESS: 0x0020,
  PRIORITY: 0x0024,
  USE_CANDIDATE: 0x0025,
  SOFTWARE: 0x8022,
  FINGERPRINT: 0x8028,
  ICE_CONTROLLED: 0x8029,
  ICE_CONTROLLING: 0x802a,
} as const;

/** RFC 8489 14: types 0x0000-0x7FFF are comprehension-required, 0x8000-0xFFFF optional. */
export function isComprehensionRequired(type: number): boolean {
  return type < 0x8000;
}

/** The comprehension-required attributes a Binding request to an ICE agent may carry. */
export const UNDERSTOOD_IN_BINDING: ReadonlySet<number> = new Set([
  STUN_ATTRIBUTE.USERNAME,
  STUN_ATTRIBUTE.MESSAGE_INTEGRITY,
  STUN_ATTRIBUTE.PRIORITY,
  STUN_ATTRIBUTE.USE_CANDIDATE,
  STUN_ATTRIBUTE.XOR_MAPPED_ADDRESS,
  STUN_ATTRIBUTE.ERROR_CODE,
]);

/** Reason phrases of the error codes voxgate sends (RFC 8489 14.8, RFC 8445 16.1). */
export const STUN_ERROR_REASON: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthenticated',
  420: 'Unknown Attribute',
  487: 'Role Conflict',
  500: 'Server Error',
};

export function uint32Value(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes;
}

export function readUint32(value: Buffer): number | null {
  return value.length === 4 ? value.readUInt32BE(0) : null;
}

/** ICE-CONTROLLING and ICE-CONTROLLED carry a 64-bit tie-breaker (RFC 8445 16.1). */
export function uint64Value(value: bigint): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(value);
  return bytes;
}

export function readUint64(value: Buffer): bigint | null {
  return value.length === 8 ? value.readBigUInt64BE(0) : null;
}

/*
 * RFC 8489 14.8, ERROR-CODE:
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |           Reserved, should be 0         |Class|     Number    |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |      Reason Phrase (variable)                                ..
 */
export interface StunErrorCode {
  readonly code: number;
  readonly reason: string;
}

export function errorCodeValue(code: number, reason = STUN_ERROR_REASON[code] ?? ''): Buffer {
  if (!Number.isInteger(code) || code < 300 || code > 699) {
    throw new RangeError(`Expected an integer between 300 and 699 for code but received ${code}`);
  }
  const phrase = Buffer.from(reason, 'utf8');
  const bytes = Buffer.alloc(4 + phrase.length);
  bytes[2] = Math.floor(code / 100);
  bytes[3] = code % 100;
  phrase.copy(bytes, 4);
  return bytes;
}

export function readErrorCode(value: Buffer): StunErrorCode | null {
  if (value.length < 4) return null;
  const hundreds = value[2]! & 0x07;
  const number = value[3]!;
  if (hundreds < 3 || hundreds > 6 || number > 99) return null;
  return { code: hundreds * 100 + number, reason: value.subarray(4).toString('utf8') };
}

/** RFC 8489 14.9: UNKNOWN-ATTRIBUTES lists 16-bit types. */
export function unknownAttributesValue(types: readonly number[]): Buffer {
  const bytes = Buffer.alloc(types.length * 2);
  types.forEach((type, i) => bytes.writeUInt16BE(type, i * 2));
  return bytes;
}

export function readUnknownAttributes(value: Buffer): number[] {
  const types: number[] = [];
  for (let i = 0; i + 1 < value.length; i += 2) types.push(value.readUInt16BE(i));
  return types;
}
