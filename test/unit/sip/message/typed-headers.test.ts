import { describe, expect, it } from 'vitest';
import { type SipMessage, SipRequest, parseMessage } from '../../../../src/sip/message/index.js';

/** A request carrying the given header rows. */
function withRows(...rows: string[]): SipMessage {
  return parseMessage(
    Buffer.from(`OPTIONS sip:a@b.example SIP/2.0\r\n${rows.map((r) => `${r}\r\n`).join('')}\r\n`),
  );
}

describe('CSeq, Call-ID and the numeric headers', () => {
  it('reads CSeq with leading zeros and LWS, up to 2**32-1 (RFC 3261 8.1.1.5)', () => {
    expect(withRows('CSeq:  004294967295   INVITE').cseq()).toEqual({
      seq: 4294967295,
      method: 'INVITE',
    });
    for (const bad of ['4294967296 INVITE', '1', 'INVITE', '-1 INVITE', '1 IN VITE', '1 <x>']) {
      expect(() => withRows(`CSeq: ${bad}`).cseq()).toThrow('Malformed CSeq header');
    }
    expect(() => withRows().cseq()).toThrow('Missing CSeq header');
    expect(() => withRows('CSeq: 1 A', 'CSeq: 2 A').cseq()).toThrow('Multiple CSeq headers');
  });

  it('reads Call-ID as word [ "@" word ] (RFC 3261 20.8)', () => {
    expect(withRows('i: f81d4fae-7dec@[2001:db8::1]').callId()).toBe('f81d4fae-7dec@[2001:db8::1]');
    for (const bad of ['a@b@c', '@b', 'a b', 'a@']) {
      expect(() => withRows(`Call-ID: ${bad}`).callId()).toThrow('Malformed Call-ID header');
    }
  });

  it('reads Max-Forwards 0-255, Expires and Content-Length as delta-seconds', () => {
    const m = withRows('Max-Forwards: 0070', 'Expires: 4294967295', 'l: 0');
    expect(m.maxForwards()).toBe(70);
    expect(m.expires()).toBe(4294967295);
    expect(m.contentLength()).toBe(0);
    expect(withRows().maxForwards()).toBeNull();
    expect(withRows().expires()).toBeNull();
    expect(() => withRows('Max-Forwards: 256').maxForwards()).toThrow('Malformed Max-Forwards');
    expect(() => withRows('Max-Forwards: seven').maxForwards()).toThrow('Malformed Max-Forwards');
    expect(() => withRows('Expires: 4294967296').expires()).toThrow('Malformed Expires header');
  });
});

describe('Content-Type', () => {
  it('reads type, subtype and parameters, unquoting values', () => {
    expect(withRows('c: Multipart/Mixed ; Boundary="a;b" ;charset=utf-8').contentType()).toEqual({
      type: 'multipart',
      subtype: 'mixed',
      params: new Map([
        ['boundary', 'a;b'],
        ['charset', 'utf-8'],
      ]),
    });
    expect(withRows().contentType()).toBeNull();
    for (const bad of ['application', 'application/', 'a/b;c', 'a/b c', 'a/b;c=1;c=2']) {
      expect(() => withRows(`Content-Type: ${bad}`).contentType()).toThrow(
        'Malformed Content-Type header',
      );
    }
  });
});

describe('Date', () => {
  it('reads rfc1123-date in GMT only (RFC 3261 20.17)', () => {
    expect(withRows('Date: Sat, 13 Nov 2010 23:29:00 GMT').date()).toBe(
      Date.UTC(2010, 10, 13, 23, 29, 0),
    );
    for (const bad of [
      'Sat, 13 Nov 2010 23:29:00 UTC',
      'Sat, 13 Nov 2010 23:29:00',
      'Sat,13 Nov 2010 23:29:00 GMT',
      'Sat, 32 Nov 2010 23:29:00 GMT',
      'Sat, 13 Nov 2010 24:00:00 GMT',
      'Someday, 13 Nov 2010 23:29:00 GMT',
    ]) {
      expect(() => withRows(`Date: ${bad}`).date()).toThrow('Malformed Date header');
    }
  });
});

describe('credentials and challenges', () => {
  it('reads Digest parameters unquoted, with quoted-pairs resolved', () => {
    const [challenge, second] = withRows(
      'WWW-Authenticate: Digest realm="voxgate \\"x\\"", qop="auth,auth-int", nonce="a,b", algorithm=SHA-256, stale=TRUE',
      'WWW-Authenticate: Digest realm="voxgate", nonce="c", algorithm=MD5',
    ).wwwAuthenticate();
    expect(challenge!.scheme).toBe('Digest');
    expect([...challenge!.params]).toEqual([
      ['realm', 'voxgate "x"'],
      ['qop', 'auth,auth-int'],
      ['nonce', 'a,b'],
      ['algorithm', 'SHA-256'],
      ['stale', 'TRUE'],
    ]);
    expect(second!.params.get('algorithm')).toBe('MD5');
  });

  it('reads a bearer token (RFC 8898) and unknown schemes', () => {
    const m = withRows(
      'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln_-==',
      'Proxy-Authorization: NTLM realm=x',
    );
    expect(m.authorization()[0]).toEqual({
      scheme: 'Bearer',
      params: new Map(),
      token68: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln_-==',
    });
    expect(m.proxyAuthorization()[0]!.params.get('realm')).toBe('x');
    expect(withRows('Proxy-Authenticate: Digest realm="p"').proxyAuthenticate()).toHaveLength(1);
  });

  it.each([
    'Digest realm="unterminated',
    'Digest realm',
    'Digest realm="a" nonce="b"',
    'Digest realm="a",, nonce="b"',
    'Digest realm="a", realm="b"',
    'Digest, realm="a"',
  ])('refuses %j', (value) => {
    expect(() => withRows(`Authorization: ${value}`).authorization()).toThrow(
      'Malformed Authorization header',
    );
  });
});

describe('option tags', () => {
  it('reads Require, Proxy-Require, Supported and Unsupported across rows', () => {
    const m = withRows(
      'Require: 100rel , timer',
      'Require: replaces',
      'k:',
      'Proxy-Require: sec-agree',
      'Unsupported: foo',
    );
    expect(m.requires()).toEqual(['100rel', 'timer', 'replaces']);
    expect(m.supported()).toEqual([]);
    expect(m.proxyRequire()).toEqual(['sec-agree']);
    expect(m.unsupported()).toEqual(['foo']);
    expect(() => withRows('Require:').requires()).toThrow('Malformed Require header');
    expect(() => withRows('Supported: a b').supported()).toThrow('Malformed Supported header');
  });
});

describe('typed access', () => {
  it('is cached until the headers change, and errors name the request', () => {
    const m = withRows('Max-Forwards: 70', 'To: <sip:x@y>') as SipRequest;
    expect(m.to()).toBe(m.to());
    m.headers.set('To', '<sip:z@y>;tag=1');
    expect(m.to().tag).toBe('1');
    m.headers.set('To', 'not an address');
    try {
      m.to();
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({
        reason: 'Malformed To header',
        isRequest: true,
        method: 'OPTIONS',
      });
    }
  });

  it('reads Contact as a wildcard only when it stands alone', () => {
    expect(withRows('Contact: *').contact()).toBe('*');
    expect(withRows().contact()).toEqual([]);
    expect(() => withRows('Contact: *', 'Contact: <sip:a@b>').contact()).toThrow(
      'Malformed Contact header',
    );
    expect(() => withRows('Contact: *, <sip:a@b>').contact()).toThrow('Malformed Contact header');
  });
});
