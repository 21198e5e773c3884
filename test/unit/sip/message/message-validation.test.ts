import { describe, expect, it } from 'vitest';
import {
  SipParseError,
  SipRequest,
  SipResponse,
  parseMessage,
  rejectionStatus,
  validateRequest,
  validateResponse,
} from '../../../../src/sip/message/index.js';
import { TYPICAL } from './typical-messages.js';

const request = (text: string): SipRequest => parseMessage(Buffer.from(text)) as SipRequest;

const CORE = [
  'Via: SIP/2.0/UDP h.example;branch=z9hG4bK1',
  'From: <sip:a@example.com>;tag=1',
  'To: <sip:b@example.com>',
  'Call-ID: v1@h',
  'CSeq: 1 OPTIONS',
];

function options(...rows: string[]): SipRequest {
  return request(
    `OPTIONS sip:b@example.com SIP/2.0\r\n${rows.map((r) => `${r}\r\n`).join('')}\r\n`,
  );
}

function fault(f: () => void): SipParseError {
  try {
    f();
  } catch (error) {
    if (error instanceof SipParseError) return error;
    throw error;
  }
  throw new Error('valid');
}

describe('validateRequest', () => {
  it('accepts typical traffic', () => {
    for (const data of [TYPICAL.INVITE, TYPICAL.REGISTER, TYPICAL.ACK, TYPICAL.BYE_COMPACT]) {
      expect(() => validateRequest(parseMessage(data) as SipRequest)).not.toThrow();
    }
    expect(() => validateRequest(options(...CORE))).not.toThrow();
  });

  it('requires Via, From, To, Call-ID and CSeq, once each (RFC 3261 8.1.1)', () => {
    for (const [i, name] of ['Via', 'From', 'To', 'Call-ID', 'CSeq'].entries()) {
      const without = CORE.filter((_, j) => j !== i);
      expect(fault(() => validateRequest(options(...without))).reason).toBe(
        `Missing ${name} header`,
      );
      if (name !== 'Via') {
        const twice = [...CORE, CORE[i]!];
        expect(fault(() => validateRequest(options(...twice))).reason).toBe(
          `Multiple ${name} headers`,
        );
      }
    }
  });

  it('requires the CSeq method to be the request method (RFC 3261 8.1.1.5)', () => {
    const error = fault(() => validateRequest(options(...CORE.slice(0, 4), 'CSeq: 1 INVITE')));
    expect(error.reason).toBe('CSeq method does not match the request method');
    expect(error).toMatchObject({ isRequest: true, method: 'OPTIONS', header: 'CSeq' });
    expect(rejectionStatus(error)).toBe(400);
  });

  it('refuses URI headers where RFC 3261 19.1.1 does not allow them', () => {
    const inRuri = request(
      `OPTIONS sip:b@example.com?Subject=x SIP/2.0\r\n${CORE.join('\r\n')}\r\n\r\n`,
    );
    expect(fault(() => validateRequest(inRuri)).reason).toBe('Malformed Request-URI');
    const inTo = options(
      ...CORE.slice(0, 2),
      'To: <sip:b@example.com?Subject=x>',
      ...CORE.slice(3),
    );
    expect(fault(() => validateRequest(inTo)).reason).toBe('Malformed To header');
    const inRoute = options(...CORE, 'Route: <sip:p.example;lr?x=y>');
    expect(fault(() => validateRequest(inRoute)).reason).toBe('Malformed Route header');
    const inContact = options(...CORE, 'Contact: <sip:b@h.example?Subject=ok>');
    expect(() => validateRequest(inContact)).not.toThrow();
  });

  it('refuses a malformed value in every header it reads', () => {
    for (const row of [
      'Max-Forwards: 256',
      'Contact: <sip:a@b',
      'Record-Route: sip:p.example',
      'Expires: x',
      'Content-Type: text',
      'Date: yesterday',
      'Require: a b',
      'Proxy-Require:',
      'Supported: ;',
      'Unsupported: ,',
      'Authorization: Digest x',
      'Proxy-Authorization: Digest realm=',
    ]) {
      const name = row.slice(0, row.indexOf(':'));
      expect(fault(() => validateRequest(options(...CORE, row))).reason).toBe(
        `Malformed ${name} header`,
      );
    }
  });

  it('accepts a request without Max-Forwards (RFC 3261 16.3) or a known URI scheme', () => {
    const tel = request(`OPTIONS tel:+14155550123 SIP/2.0\r\n${CORE.join('\r\n')}\r\n\r\n`);
    expect(() => validateRequest(tel)).not.toThrow();
  });
});

describe('validateResponse', () => {
  it('accepts typical responses and refuses broken ones, to be dropped', () => {
    for (const data of [TYPICAL.OK_200, TYPICAL.UNAUTHORIZED_401]) {
      expect(() => validateResponse(parseMessage(data) as SipResponse)).not.toThrow();
    }
    const broken = parseMessage(
      Buffer.from(`SIP/2.0 200 OK\r\n${CORE.join('\r\n')}\r\nWWW-Authenticate: Digest\r\n\r\n`),
    ) as SipResponse;
    const error = fault(() => validateResponse(broken));
    expect(error.reason).toBe('Malformed WWW-Authenticate header');
    expect(error.isRequest).toBe(false);
    expect(rejectionStatus(error)).toBeNull();
  });
});
