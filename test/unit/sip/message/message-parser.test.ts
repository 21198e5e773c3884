import { describe, expect, it } from 'vitest';
import {
  SipParseError,
  SipRequest,
  SipResponse,
  parseMessage,
  rejectionStatus,
} from '../../../../src/sip/message/index.js';
import { TYPICAL } from './typical-messages.js';

const HEAD =
  'Via: SIP/2.0/UDP a.example;branch=z9hG4bK1\r\nCall-ID: c1\r\nContent-Length: 0\r\n\r\n';

function failure(data: Buffer | string, options?: Parameters<typeof parseMessage>[1]) {
  try {
    parseMessage(typeof data === 'string' ? Buffer.from(data, 'latin1') : data, options);
  } catch (error) {
    if (error instanceof SipParseError) return error;
    throw error;
  }
  throw new Error('parsed');
}

describe('start lines (RFC 3261 7.1, 7.2)', () => {
  it('reads a request line and a status line', () => {
    const request = parseMessage(Buffer.from(`REGISTER sip:example.com SIP/2.0\r\n${HEAD}`));
    expect(request).toBeInstanceOf(SipRequest);
    expect(request).toMatchObject({
      method: 'REGISTER',
      uri: 'sip:example.com',
      version: 'SIP/2.0',
    });
    const response = parseMessage(Buffer.from(`SIP/2.0 180 Ringing  softly\r\n${HEAD}`));
    expect(response).toBeInstanceOf(SipResponse);
    expect(response).toMatchObject({ status: 180, reason: 'Ringing  softly' });
  });

  it('takes the version in any case (RFC 3261 7.1) and writes it upper-case', () => {
    const request = parseMessage(Buffer.from(`OPTIONS sip:a@b sip/2.0\r\n${HEAD}`));
    expect(request.toString().startsWith('OPTIONS sip:a@b SIP/2.0\r\n')).toBe(true);
  });

  it.each([
    ['INVITE  sip:a@b SIP/2.0', 'Malformed Request-Line'],
    ['INVITE sip:a@b  SIP/2.0', 'Malformed Request-Line'],
    ['INVITE sip:a@b SIP/2.0 ', 'Malformed Request-Line'],
    ['INVITE sip:a@b', 'Malformed Request-Line'],
    ['INVITE\tsip:a@b SIP/2.0', 'Malformed Request-Line'],
    ['INV<ITE sip:a@b SIP/2.0', 'Malformed Request-Line'],
    [' INVITE sip:a@b SIP/2.0', 'Malformed Request-Line'],
    ['INVITE <sip:a@b> SIP/2.0', 'Malformed Request-URI'],
    ['INVITE sip:a@b; lr SIP/2.0', 'Malformed Request-URI'],
    ['INVITE a@b SIP/2.0', 'Malformed Request-URI'],
    ['INVITE sip:a@b SIP/2', 'Malformed Request-Line'],
    ['INVITE sip:a@b HTTP/1.1', 'Malformed Request-Line'],
  ])('refuses the request line %j: %s, answered 400', (line, reason) => {
    const error = failure(`${line}\r\n${HEAD}`);
    expect(error.reason).toBe(reason);
    expect(rejectionStatus(error)).toBe(400);
  });

  it('answers another SIP version with 505, and keeps the headers to answer with', () => {
    const error = failure(`INVITE sip:a@b SIP/3.0\r\n${HEAD}`);
    expect(error.kind).toBe('version-not-supported');
    expect(rejectionStatus(error)).toBe(505);
    expect(error.method).toBe('INVITE');
    expect(error.partial!.headers.get('call-id')).toBe('c1');
    expect(error.partial!.startLine).toBe('INVITE sip:a@b SIP/3.0');
  });

  it.each([
    ['SIP/2.0 99 Too Low', 'Bad status code'],
    ['SIP/2.0 700 Too High', 'Bad status code'],
    ['SIP/2.0 2000 OK', 'Bad status code'],
    ['SIP/2.0 20 OK', 'Bad status code'],
    ['SIP/2.0 200', 'Bad status code'],
    ['SIP/2.0 200OK', 'Bad status code'],
    ['SIP/2.0  200 OK', 'Bad status code'],
    ['SIP/2.0 200 O\u0001K', 'Malformed Status-Line'],
    ['SIP/3.0 200 OK', 'SIP version not supported'],
  ])('refuses the status line %j: %s, and drops it', (line, reason) => {
    const error = failure(`${line}\r\n${HEAD}`);
    expect(error.reason).toBe(reason);
    expect(error.isRequest).toBe(false);
    expect(rejectionStatus(error)).toBeNull();
  });

  it('never answers an ACK', () => {
    expect(rejectionStatus(failure(`ACK sip:a@b SIP/3.0\r\n${HEAD}`))).toBeNull();
  });
});

describe('header rows', () => {
  it('unfolds continuation lines into one SP (RFC 3261 7.3.1)', () => {
    const m = parseMessage(
      Buffer.from(
        'OPTIONS sip:a@b SIP/2.0\r\nSubject: one  \r\n \t two\r\n\tthree\r\nTo:\r\n <sip:a@b>\r\n\r\n',
      ),
    );
    expect(m.headers.get('Subject')).toBe('one two three');
    expect(m.headers.get('To')).toBe('<sip:a@b>');
  });

  it('allows whitespace before the colon and none after', () => {
    const m = parseMessage(Buffer.from('OPTIONS sip:a@b SIP/2.0\r\nX-A \t:1\r\nX-B:\r\n\r\n'));
    expect(m.headers.get('x-a')).toBe('1');
    expect(m.headers.get('x-b')).toBe('');
  });

  it('ignores CRLFs before the start line (RFC 3261 7.5)', () => {
    expect(parseMessage(Buffer.from(`\r\n\r\nOPTIONS sip:a@b SIP/2.0\r\n${HEAD}`))).toBeInstanceOf(
      SipRequest,
    );
  });

  it.each([
    ['X Y: 1', 'Malformed header line'],
    [': 1', 'Malformed header line'],
    ['NoColon', 'Malformed header line'],
    ['X-\u00e9: 1', 'Malformed header line'],
    ['X-A: 1\rX-B: 2', 'Bad line ending'],
    ['X-A: 1\nX-B: 2', 'Bad line ending'],
  ])('refuses the row %j: %s, keeping the good rows', (row, reason) => {
    const error = failure(`OPTIONS sip:a@b SIP/2.0\r\n${row}\r\n${HEAD}`);
    expect(error.reason).toBe(reason);
    expect(rejectionStatus(error)).toBe(400);
    expect(error.partial!.headers.get('Via')).toBe('SIP/2.0/UDP a.example;branch=z9hG4bK1');
  });

  it('refuses a continuation line with nothing to continue', () => {
    expect(failure(`OPTIONS sip:a@b SIP/2.0\r\n folded\r\n${HEAD}`).reason).toBe(
      'Malformed header line',
    );
  });

  it('refuses a head without its empty line', () => {
    expect(failure('OPTIONS sip:a@b SIP/2.0\r\nVia: x\r\n').reason).toBe('Missing end of headers');
    expect(failure('OPTIONS sip:a@b SIP/2.0').reason).toBe('Missing end of headers');
    expect(failure('').reason).toBe('Malformed Request-Line');
  });
});

describe('body framing (RFC 3261 18.3, 20.14)', () => {
  const request = (head: string, body: string): Buffer =>
    Buffer.from(`MESSAGE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP h\r\n${head}\r\n${body}`, 'latin1');

  it('takes Content-Length octets and discards the rest of a datagram', () => {
    const m = parseMessage(request('Content-Length: 5\r\n', 'hello, and more'));
    expect(m.body.toString()).toBe('hello');
    expect(m.contentLength()).toBe(5);
  });

  it('takes the rest of a datagram without Content-Length, but not of a stream', () => {
    expect(parseMessage(request('', 'all of it')).body.toString()).toBe('all of it');
    expect(failure(request('', 'all of it'), { streamed: true }).reason).toBe(
      'Missing Content-Length',
    );
  });

  it.each([
    ['Content-Length: 50\r\n', 'Content-Length exceeds body'],
    ['Content-Length: -1\r\n', 'Bad Content-Length'],
    ['Content-Length: five\r\n', 'Bad Content-Length'],
    ['Content-Length: 99999999999\r\n', 'Bad Content-Length'],
    ['Content-Length: 1\r\nl: 1\r\n', 'Multiple Content-Length headers'],
  ])('refuses %j: %s', (head, reason) => {
    const error = failure(request(head, 'hello'));
    expect(error.reason).toBe(reason);
    expect(rejectionStatus(error)).toBe(400);
  });

  it('keeps binary bodies exact, and refuses messages over the maximum size with 513', () => {
    const body = Buffer.from([0, 1, 2, 0xff, 0x0d, 0x0a, 0x0d, 0x0a, 0x80]);
    const data = Buffer.concat([
      Buffer.from('MESSAGE sip:a@b SIP/2.0\r\nContent-Length: 9\r\n\r\n'),
      body,
    ]);
    expect(parseMessage(data).body.equals(body)).toBe(true);
    const error = failure(data, { maxSize: 20 });
    expect(error.kind).toBe('too-large');
    expect(rejectionStatus(error)).toBe(513);
  });
});

describe('writing', () => {
  it('writes canonical messages back byte for byte', () => {
    for (const data of [
      TYPICAL.INVITE,
      TYPICAL.OK_200,
      TYPICAL.REGISTER,
      TYPICAL.ACK,
      TYPICAL.UNAUTHORIZED_401,
    ]) {
      expect(parseMessage(data).toBuffer().equals(data)).toBe(true);
    }
  });

  it('writes compact names long, and what it writes reads the same', () => {
    const m = parseMessage(TYPICAL.BYE_COMPACT);
    const written = m.toBuffer();
    expect(written.toString('latin1')).toContain('\r\nVia: SIP/2.0/WSS df7jal23ls0d.invalid;');
    expect(written.toString('latin1')).toContain('\r\nCall-ID: a84b4c76e66710@pc33');
    const again = parseMessage(written, { streamed: true });
    expect([...again.headers].map(([, v]) => v)).toEqual([...m.headers].map(([, v]) => v));
    expect(again.from()).toEqual(m.from());
  });

  it('computes Content-Length from the body, whatever the header said', () => {
    const m = parseMessage(TYPICAL.INVITE);
    m.body = Buffer.from('v=0\r\n');
    m.headers.append('Content-Length', '999');
    const text = m.toBuffer().toString('latin1');
    expect(text.match(/Content-Length: \d+/g)).toEqual(['Content-Length: 5']);
    expect(text.endsWith('\r\n\r\nv=0\r\n')).toBe(true);
  });

  it('builds new messages, writing text reasons and bodies as UTF-8', () => {
    const response = new SipResponse({
      status: 486,
      reason: 'Occupé',
      headers: [['Via', 'SIP/2.0/UDP h;branch=z9hG4bK1']],
      body: 'né',
    });
    const data = response.toBuffer();
    expect(data.toString('utf8')).toBe(
      'SIP/2.0 486 Occupé\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nContent-Length: 3\r\n\r\nné',
    );
    expect((parseMessage(data) as SipResponse).reason).toBe('Occupé');
    const request = new SipRequest({ method: 'OPTIONS', uri: 'sip:a@b' });
    expect(request.toString()).toBe('OPTIONS sip:a@b SIP/2.0\r\nContent-Length: 0\r\n\r\n');
  });

  it('refuses to write a start line that would not parse back', () => {
    expect(() => new SipRequest({ method: 'IN VITE', uri: 'sip:a@b' }).toBuffer()).toThrow(
      TypeError,
    );
    expect(() =>
      new SipRequest({ method: 'INVITE', uri: 'sip:a@b SIP/2.0\r\nX:' }).toBuffer(),
    ).toThrow(TypeError);
    expect(() => new SipResponse({ status: 1000 }).toBuffer()).toThrow(TypeError);
    expect(() => new SipResponse({ status: 200, reason: 'OK\r\nVia: x' }).toBuffer()).toThrow(
      TypeError,
    );
  });
});
