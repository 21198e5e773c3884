import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  attributeValue,
  bindingError,
  encodeStunMessage,
  errorCodeValue,
  hasValidFingerprint,
  hasValidIntegrity,
  isStunDatagram,
  parseStunMessage,
  readErrorCode,
  readUint32,
  readUint64,
  readUnknownAttributes,
  readXorAddress,
  STUN_ATTRIBUTE,
  StunParseError,
  uint32Value,
  uint64Value,
  xorAddressValue,
  type StunClass,
} from '../../../../src/media/webrtc/stun/index.js';
import {
  LONG_TERM,
  SAMPLE_IPV4_RESPONSE,
  SAMPLE_IPV6_RESPONSE,
  SAMPLE_LONG_TERM_REQUEST,
  SAMPLE_REQUEST,
  SHORT_TERM_PASSWORD,
  TRANSACTION_ID,
} from './rfc5769-vectors.js';

const shortTermKey = Buffer.from(SHORT_TERM_PASSWORD, 'utf8');
const SPACE = 0x20;

describe('RFC 5769 test vectors', () => {
  it('2.1: reads the sample request and checks its integrity and fingerprint', () => {
    const request = parseStunMessage(SAMPLE_REQUEST);
    expect(request).toMatchObject({ method: 1, messageClass: 'request' });
    expect(request.transactionId).toEqual(TRANSACTION_ID);
    expect(attributeValue(request, STUN_ATTRIBUTE.SOFTWARE)?.toString()).toBe('STUN test client');
    expect(attributeValue(request, STUN_ATTRIBUTE.USERNAME)?.toString()).toBe('evtj:h6vY');
    expect(readUint32(attributeValue(request, STUN_ATTRIBUTE.PRIORITY)!)).toBe(0x6e0001ff);
    expect(readUint64(attributeValue(request, STUN_ATTRIBUTE.ICE_CONTROLLED)!)).toBe(
      0x932ff9b151263b36n,
    );
    expect(hasValidIntegrity(request, shortTermKey)).toBe(true);
    expect(hasValidIntegrity(request, Buffer.from('VOkJxbRl1RmTxUk/WvJxBT'))).toBe(false);
    expect(hasValidFingerprint(request)).toBe(true);
  });

  it('2.1: builds the sample request byte for byte', () => {
    const built = encodeStunMessage(
      {
        method: 1,
        messageClass: 'request',
        transactionId: TRANSACTION_ID,
        attributes: [
          { type: STUN_ATTRIBUTE.SOFTWARE, value: Buffer.from('STUN test client') },
          { type: STUN_ATTRIBUTE.PRIORITY, value: uint32Value(0x6e0001ff) },
          { type: STUN_ATTRIBUTE.ICE_CONTROLLED, value: uint64Value(0x932ff9b151263b36n) },
          { type: STUN_ATTRIBUTE.USERNAME, value: Buffer.from('evtj:h6vY') },
        ],
      },
      { integrityKey: shortTermKey, fingerprint: true, padding: SPACE },
    );
    expect(built.toString('hex')).toBe(SAMPLE_REQUEST.toString('hex'));
  });

  it.each([
    ['2.2', SAMPLE_IPV4_RESPONSE, { address: '192.0.2.1', port: 32853 }],
    ['2.3', SAMPLE_IPV6_RESPONSE, { address: '2001:db8:1234:5678:11:2233:4455:6677', port: 32853 }],
  ])('%s: reads the response, and builds it again byte for byte', (_section, bytes, mapped) => {
    const response = parseStunMessage(bytes);
    expect(response.messageClass).toBe('success');
    const value = attributeValue(response, STUN_ATTRIBUTE.XOR_MAPPED_ADDRESS)!;
    expect(readXorAddress(value, response.transactionId)).toEqual(mapped);
    expect(hasValidIntegrity(response, shortTermKey)).toBe(true);
    expect(hasValidFingerprint(response)).toBe(true);
    const built = encodeStunMessage(
      {
        method: 1,
        messageClass: 'success',
        transactionId: TRANSACTION_ID,
        attributes: [
          { type: STUN_ATTRIBUTE.SOFTWARE, value: Buffer.from('test vector') },
          {
            type: STUN_ATTRIBUTE.XOR_MAPPED_ADDRESS,
            value: xorAddressValue(mapped, TRANSACTION_ID),
          },
        ],
      },
      { integrityKey: shortTermKey, fingerprint: true, padding: SPACE },
    );
    expect(built.toString('hex')).toBe(bytes.toString('hex'));
  });

  it('2.4: checks the long-term request with the MD5 key, and builds it again', () => {
    const request = parseStunMessage(SAMPLE_LONG_TERM_REQUEST);
    const { username, realm, password } = LONG_TERM;
    // RFC 8489 9.2.2: key = MD5(username ":" OpaqueString(realm) ":" OpaqueString(password)).
    const key = createHash('md5').update(`${username}:${realm}:${password}`, 'utf8').digest();
    expect(attributeValue(request, STUN_ATTRIBUTE.USERNAME)?.toString('utf8')).toBe(username);
    expect(attributeValue(request, STUN_ATTRIBUTE.REALM)?.toString()).toBe(realm);
    expect(request.fingerprintAt).toBeNull();
    expect(hasValidIntegrity(request, key)).toBe(true);
    expect(hasValidFingerprint(request)).toBe(false);
    const built = encodeStunMessage(
      {
        method: 1,
        messageClass: 'request',
        transactionId: request.transactionId,
        attributes: request.attributes.filter(
          (attribute) => attribute.type !== STUN_ATTRIBUTE.MESSAGE_INTEGRITY,
        ),
      },
      { integrityKey: key },
    );
    expect(built.toString('hex')).toBe(SAMPLE_LONG_TERM_REQUEST.toString('hex'));
  });

  it('finds a changed byte by its integrity and its fingerprint', () => {
    // Inside SOFTWARE, PRIORITY, ICE-CONTROLLED, USERNAME and MESSAGE-INTEGRITY's values.
    for (const at of [24, 44, 52, 64, 80]) {
      const changed = Buffer.from(SAMPLE_REQUEST);
      changed[at] = changed[at]! ^ 0x01;
      const message = parseStunMessage(changed);
      expect(hasValidFingerprint(message)).toBe(false);
      expect(hasValidIntegrity(message, shortTermKey)).toBe(false);
    }
  });
});

describe('the STUN message codec', () => {
  it.each<[StunClass, number]>([
    ['request', 0x0001],
    ['indication', 0x0011],
    ['success', 0x0101],
    ['error', 0x0111],
  ])('writes and reads a Binding %s as type %i', (messageClass, type) => {
    const transactionId = randomBytes(12);
    const bytes = encodeStunMessage({ method: 1, messageClass, transactionId, attributes: [] });
    expect(bytes.readUInt16BE(0)).toBe(type);
    expect(bytes.length).toBe(20);
    expect(parseStunMessage(bytes)).toMatchObject({ method: 1, messageClass, transactionId });
    expect(isStunDatagram(bytes)).toBe(true);
  });

  it('keeps the method bits apart from the class bits', () => {
    const bytes = encodeStunMessage(
      { method: 0xfff, messageClass: 'error', transactionId: TRANSACTION_ID, attributes: [] },
      {},
    );
    expect(bytes.readUInt16BE(0)).toBe(0x3fff);
    expect(parseStunMessage(bytes)).toMatchObject({ method: 0xfff, messageClass: 'error' });
  });

  it('ignores attributes after MESSAGE-INTEGRITY except FINGERPRINT', () => {
    const signed = encodeStunMessage(
      { method: 1, messageClass: 'request', transactionId: TRANSACTION_ID, attributes: [] },
      { integrityKey: shortTermKey },
    );
    const extra = Buffer.from([0x00, 0x24, 0x00, 0x04, 1, 2, 3, 4]);
    const appended = Buffer.concat([signed, extra]);
    appended.writeUInt16BE(appended.length - 20, 2);
    const message = parseStunMessage(appended);
    expect(message.attributes.map((attribute) => attribute.type)).toEqual([
      STUN_ATTRIBUTE.MESSAGE_INTEGRITY,
    ]);
    expect(hasValidIntegrity(message, shortTermKey)).toBe(true);
  });

  it.each<[string, (bytes: Buffer) => Buffer, string]>([
    ['a short datagram', (b) => b.subarray(0, 19), 'shorter than the header'],
    ['no magic cookie', (b) => (b.writeUInt32BE(0x2112a443, 4), b), 'no magic cookie'],
    ['the top bits set', (b) => ((b[0] = 0x40), b), 'first two bits'],
    ['a length of 3', (b) => (b.writeUInt16BE(3, 2), b), 'not a multiple of 4'],
    ['a longer length', (b) => (b.writeUInt16BE(b.length, 2), b), 'does not match'],
    ['an overrunning value', (b) => (b.writeUInt16BE(200, 22), b), 'overruns'],
    ['a 19-byte integrity', (b) => (b.writeUInt16BE(19, 78), b), 'not 20 bytes'],
  ])('refuses %s', (_name, spoil, reason) => {
    const spoilt = spoil(Buffer.from(SAMPLE_REQUEST));
    expect(() => parseStunMessage(spoilt)).toThrow(StunParseError);
    expect(() => parseStunMessage(spoilt)).toThrow(reason);
  });

  it('tells STUN from RTP and DTLS by the first byte (RFC 7983)', () => {
    expect(isStunDatagram(SAMPLE_REQUEST)).toBe(true);
    const rtp = Buffer.from(SAMPLE_REQUEST);
    rtp[0] = 0x80;
    expect(isStunDatagram(rtp)).toBe(false);
    const dtls = Buffer.from(SAMPLE_REQUEST);
    dtls[0] = 22;
    expect(isStunDatagram(dtls)).toBe(false);
    expect(isStunDatagram(Buffer.alloc(12))).toBe(false);
  });
});

describe('attribute values', () => {
  it.each([
    { address: '203.0.113.7', port: 1 },
    { address: '2001:db8::1', port: 65535 },
    { address: '::', port: 3478 },
    { address: 'fe80::1:0:0:4', port: 7 },
    { address: '1:0:2:0:3:0:4:0', port: 9 },
  ])('XOR-MAPPED-ADDRESS round-trips $address', (where) => {
    const transactionId = randomBytes(12);
    expect(readXorAddress(xorAddressValue(where, transactionId), transactionId)).toEqual(where);
  });

  it('reads IPv6 written in any form in its shortest form', () => {
    const value = xorAddressValue({ address: '2001:0DB8:0:0:1:0:0:1', port: 5 }, TRANSACTION_ID);
    expect(readXorAddress(value, TRANSACTION_ID)?.address).toBe('2001:db8::1:0:0:1');
    const mapped = xorAddressValue({ address: '::ffff:192.0.2.9', port: 5 }, TRANSACTION_ID);
    expect(readXorAddress(mapped, TRANSACTION_ID)?.address).toBe('::ffff:c000:209');
    expect(() => xorAddressValue({ address: 'example.org', port: 1 }, TRANSACTION_ID)).toThrow(
      TypeError,
    );
    expect(readXorAddress(Buffer.from([0, 3, 0, 0, 1, 2, 3, 4]), TRANSACTION_ID)).toBeNull();
  });

  it('ERROR-CODE carries the class, number and reason', () => {
    expect(errorCodeValue(401).toString('hex')).toBe(
      '00000401' + Buffer.from('Unauthenticated').toString('hex'),
    );
    expect(readErrorCode(errorCodeValue(420))).toEqual({ code: 420, reason: 'Unknown Attribute' });
    expect(readErrorCode(errorCodeValue(487, 'x'))).toEqual({ code: 487, reason: 'x' });
    expect(() => errorCodeValue(200)).toThrow(RangeError);
  });

  it('a 420 names the unknown attributes and is not signed when no key is given', () => {
    const request = parseStunMessage(SAMPLE_REQUEST);
    const response = parseStunMessage(bindingError(request, 420, { unknown: [0x0031, 0x7777] }));
    expect(response.messageClass).toBe('error');
    expect(response.transactionId).toEqual(request.transactionId);
    expect(readErrorCode(attributeValue(response, STUN_ATTRIBUTE.ERROR_CODE)!)?.code).toBe(420);
    const unknown = attributeValue(response, STUN_ATTRIBUTE.UNKNOWN_ATTRIBUTES)!;
    expect(readUnknownAttributes(unknown)).toEqual([0x0031, 0x7777]);
    expect(response.integrityAt).toBeNull();
    expect(hasValidFingerprint(response)).toBe(true);
  });
});
