import { createHmac, timingSafeEqual } from 'node:crypto';
import { crc32 } from './crc32.js';
import { STUN_ATTRIBUTE } from './stun-attributes.js';
import { StunParseError } from './stun-parse-error.js';

/*
 * RFC 8489 5, the STUN header:
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |0 0|     STUN Message Type     |         Message Length        |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                         Magic Cookie                          |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                     Transaction ID (96 bits)                  |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * The type interleaves the method and class bits: M11-M7 C1 M6-M4 C0 M3-M0. Each attribute is
 * a 16-bit type, a 16-bit length and its value padded to a multiple of 4 bytes.
 */
export const MAGIC_COOKIE = 0x2112a442;
export const STUN_HEADER_BYTES = 20;
export const STUN_METHOD_BINDING = 0x001;

const INTEGRITY_BYTES = 20;
/** RFC 8489 14.7: the CRC-32 is XORed with this, so that it differs from other protocols'. */
const FINGERPRINT_XOR = 0x5354554e;

export type StunClass = 'request' | 'indication' | 'success' | 'error';

const CLASS_BITS: Readonly<Record<StunClass, number>> = {
  request: 0x0000,
  indication: 0x0010,
  success: 0x0100,
  error: 0x0110,
};

export interface StunAttribute {
  readonly type: number;
  readonly value: Buffer;
}

export interface StunMessage {
  readonly method: number;
  readonly messageClass: StunClass;
  /** 12 bytes. */
  readonly transactionId: Buffer;
  readonly attributes: readonly StunAttribute[];
}

/** A message as received: its bytes are kept, so that its integrity can be checked. */
export interface ReceivedStunMessage extends StunMessage {
  readonly raw: Buffer;
  /** Offset in raw of the MESSAGE-INTEGRITY attribute, null when there is none. */
  readonly integrityAt: number | null;
  /** Offset in raw of the FINGERPRINT attribute, null when there is none. */
  readonly fingerprintAt: number | null;
}

export interface StunEncodeOptions {
  /** Appends MESSAGE-INTEGRITY keyed with this (the ICE password, for short-term credentials). */
  readonly integrityKey?: Buffer;
  /** Appends FINGERPRINT. */
  readonly fingerprint?: boolean;
  /** The byte that pads values (RFC 8489 14: any value; RFC 5769's vectors use 0x20). */
  readonly padding?: number;
}

/**
 * RFC 7983 7: on a port shared with DTLS and RTP, a first byte of 0-3 is STUN; the magic
 * cookie confirms it.
 */
export function isStunDatagram(datagram: Uint8Array): boolean {
  return (
    datagram.length >= STUN_HEADER_BYTES &&
    datagram[0]! <= 3 &&
    Buffer.from(datagram.buffer, datagram.byteOffset, datagram.byteLength).readUInt32BE(4) ===
      MAGIC_COOKIE
  );
}

function classOf(type: number): StunClass {
  const bits = type & 0x0110;
  return bits === 0x0000
    ? 'request'
    : bits === 0x0010
      ? 'indication'
      : bits === 0x0100
        ? 'success'
        : 'error';
}

function methodOf(type: number): number {
  return (type & 0x000f) | ((type & 0x00e0) >> 1) | ((type & 0x3e00) >> 2);
}

function messageType(method: number, messageClass: StunClass): number {
  if (!Number.isInteger(method) || method < 0 || method > 0xfff) {
    throw new RangeError(`Expected a 12-bit STUN method but received ${method}`);
  }
  const bits = (method & 0x000f) | ((method & 0x0070) << 1) | ((method & 0x0f80) << 2);
  return bits | CLASS_BITS[messageClass];
}

const padded = (length: number): number => (length + 3) & ~3;

/** Reads one datagram as a STUN message; anything malformed throws a StunParseError. */
export function parseStunMessage(datagram: Buffer): ReceivedStunMessage {
  if (datagram.length < STUN_HEADER_BYTES) throw new StunParseError('shorter than the header');
  const type = datagram.readUInt16BE(0);
  if (type & 0xc000) throw new StunParseError('the first two bits are not zero');
  if (datagram.readUInt32BE(4) !== MAGIC_COOKIE) throw new StunParseError('no magic cookie');
  const length = datagram.readUInt16BE(2);
  if (length % 4 !== 0) throw new StunParseError(`length ${length} is not a multiple of 4`);
  if (STUN_HEADER_BYTES + length !== datagram.length) {
    throw new StunParseError(`length ${length} does not match a datagram of ${datagram.length}`);
  }
  const attributes: StunAttribute[] = [];
  let integrityAt: number | null = null;
  let fingerprintAt: number | null = null;
  for (let at = STUN_HEADER_BYTES; at < datagram.length;) {
    if (at + 4 > datagram.length) throw new StunParseError('an attribute header is cut short');
    const attributeType = datagram.readUInt16BE(at);
    const valueLength = datagram.readUInt16BE(at + 2);
    const end = at + 4 + padded(valueLength);
    if (end > datagram.length) throw new StunParseError('an attribute overruns the message');
    // RFC 8489 14.5: attributes after MESSAGE-INTEGRITY, but for FINGERPRINT, are ignored;
    // 14.7: FINGERPRINT is the last one.
    const ignored =
      fingerprintAt !== null ||
      (integrityAt !== null && attributeType !== STUN_ATTRIBUTE.FINGERPRINT);
    if (!ignored) {
      const value = datagram.subarray(at + 4, at + 4 + valueLength);
      if (attributeType === STUN_ATTRIBUTE.MESSAGE_INTEGRITY) {
        if (valueLength !== INTEGRITY_BYTES)
          throw new StunParseError('MESSAGE-INTEGRITY is not 20 bytes');
        integrityAt = at;
      } else if (attributeType === STUN_ATTRIBUTE.FINGERPRINT) {
        if (valueLength !== 4) throw new StunParseError('FINGERPRINT is not 4 bytes');
        fingerprintAt = at;
      }
      attributes.push({ type: attributeType, value });
    }
    at = end;
  }
  return {
    method: methodOf(type),
    messageClass: classOf(type),
    transactionId: datagram.subarray(8, STUN_HEADER_BYTES),
    attributes,
    raw: datagram,
    integrityAt,
    fingerprintAt,
  };
}

/** The value of the first attribute of a type, null when the message has none. */
export function attributeValue(message: StunMessage, type: number): Buffer | null {
  return message.attributes.find((attribute) => attribute.type === type)?.value ?? null;
}

/** The header and the bytes up to `end`, with the length field set as if the message ended at `claimedEnd`. */
function prefixWithLength(raw: Buffer, end: number, claimedEnd: number): Buffer {
  const prefix = Buffer.from(raw.subarray(0, end));
  prefix.writeUInt16BE(claimedEnd - STUN_HEADER_BYTES, 2);
  return prefix;
}

function hmacSha1(key: Buffer, bytes: Buffer): Buffer {
  return createHmac('sha1', key).update(bytes).digest();
}

/**
 * RFC 8489 14.5: MESSAGE-INTEGRITY is the HMAC-SHA1 of the message up to the attribute, with
 * the header's length counting up to the end of MESSAGE-INTEGRITY (not a FINGERPRINT after it).
 * For short-term credentials the key is the password (RFC 8489 9.1.1; ICE passwords are
 * ice-chars, which OpaqueString leaves as they are).
 */
export function hasValidIntegrity(message: ReceivedStunMessage, key: Buffer): boolean {
  const at = message.integrityAt;
  if (at === null) return false;
  const expected = hmacSha1(key, prefixWithLength(message.raw, at, at + 4 + INTEGRITY_BYTES));
  return timingSafeEqual(expected, message.raw.subarray(at + 4, at + 4 + INTEGRITY_BYTES));
}

/** RFC 8489 14.7: FINGERPRINT is the CRC-32 of the message up to it, XOR 0x5354554e. */
export function hasValidFingerprint(message: ReceivedStunMessage): boolean {
  const at = message.fingerprintAt;
  if (at === null) return false;
  const crc = crc32(prefixWithLength(message.raw, at, at + 8)) ^ FINGERPRINT_XOR;
  return message.raw.readUInt32BE(at + 4) === crc >>> 0;
}

function attributeBytes(type: number, value: Buffer, padding: number): Buffer {
  const bytes = Buffer.alloc(4 + padded(value.length), padding);
  bytes.writeUInt16BE(type, 0);
  bytes.writeUInt16BE(value.length, 2);
  value.copy(bytes, 4);
  return bytes;
}

/** Writes a message, then MESSAGE-INTEGRITY and FINGERPRINT when asked, in that order. */
export function encodeStunMessage(message: StunMessage, options: StunEncodeOptions = {}): Buffer {
  if (message.transactionId.length !== 12) {
    throw new RangeError(
      `Expected a 12-byte transaction id but received ${message.transactionId.length} bytes`,
    );
  }
  const padding = options.padding ?? 0;
  const header = Buffer.alloc(STUN_HEADER_BYTES);
  header.writeUInt16BE(messageType(message.method, message.messageClass), 0);
  header.writeUInt32BE(MAGIC_COOKIE, 4);
  message.transactionId.copy(header, 8);
  const parts = [
    header,
    ...message.attributes.map((a) => attributeBytes(a.type, a.value, padding)),
  ];
  let bytes = Buffer.concat(parts);
  if (options.integrityKey !== undefined) {
    const mac = hmacSha1(
      options.integrityKey,
      prefixWithLength(bytes, bytes.length, bytes.length + 24),
    );
    bytes = Buffer.concat([bytes, attributeBytes(STUN_ATTRIBUTE.MESSAGE_INTEGRITY, mac, padding)]);
  }
  if (options.fingerprint) {
    const crc =
      (crc32(prefixWithLength(bytes, bytes.length, bytes.length + 8)) ^ FINGERPRINT_XOR) >>> 0;
    const value = Buffer.alloc(4);
    value.writeUInt32BE(crc);
    bytes = Buffer.concat([bytes, attributeBytes(STUN_ATTRIBUTE.FINGERPRINT, value, padding)]);
  }
  bytes.writeUInt16BE(bytes.length - STUN_HEADER_BYTES, 2);
  return bytes;
}
