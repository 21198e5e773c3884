import { describe, expect, it } from 'vitest';
import {
  SipHeaders,
  headerKey,
  octetsFromText,
  splitList,
  textFromOctets,
} from '../../../../src/sip/message/index.js';

describe('header names', () => {
  it('are case-insensitive and compact forms are their long names (RFC 3261 7.3.3)', () => {
    const pairs: [string, string][] = [
      ['i', 'call-id'],
      ['m', 'contact'],
      ['e', 'content-encoding'],
      ['L', 'content-length'],
      ['c', 'content-type'],
      ['F', 'from'],
      ['s', 'subject'],
      ['k', 'supported'],
      ['t', 'to'],
      ['V', 'via'],
      ['o', 'event'],
      ['u', 'allow-events'],
      ['r', 'refer-to'],
      ['b', 'referred-by'],
      ['x', 'session-expires'],
      ['y', 'identity'],
      ['a', 'accept-contact'],
      ['CALL-id', 'call-id'],
      ['X-Unknown', 'x-unknown'],
      ['z', 'z'],
    ];
    for (const [name, key] of pairs) expect(headerKey(name)).toBe(key);
  });
});

describe('SipHeaders', () => {
  const headers = (): SipHeaders =>
    new SipHeaders([
      ['v', 'SIP/2.0/UDP a.example.com;branch=z9hG4bK1, SIP/2.0/TCP b.example.com'],
      ['Via', 'SIP/2.0/UDP c.example.com'],
      ['From', '"Doe, John" <sip:john@example.com>;tag=1'],
      ['Contact', '"A, B" <sip:a@b>, <sip:c@d;x="1,2">;q=0.5'],
      ['Date', 'Sat, 15 Oct 2005 04:44:56 GMT'],
      ['WWW-Authenticate', 'Digest realm="a", nonce="b", qop="auth,auth-int"'],
      ['X-List', 'a, b, c'],
      ['Supported', ''],
    ]);

  it('finds a header by any spelling of its name', () => {
    const h = headers();
    expect(h.get('VIA')).toBe(
      'SIP/2.0/UDP a.example.com;branch=z9hG4bK1, SIP/2.0/TCP b.example.com',
    );
    expect(h.has('f')).toBe(true);
    expect(h.has('To')).toBe(false);
    expect(h.get('To')).toBeUndefined();
    expect(h.count('via')).toBe(2);
  });

  it('splits list headers at top-level commas only', () => {
    const h = headers();
    expect(h.getAll('Via')).toEqual([
      'SIP/2.0/UDP a.example.com;branch=z9hG4bK1',
      'SIP/2.0/TCP b.example.com',
      'SIP/2.0/UDP c.example.com',
    ]);
    expect(h.getAll('m')).toEqual(['"A, B" <sip:a@b>', '<sip:c@d;x="1,2">;q=0.5']);
  });

  it('never splits single-valued, credential, Date or unknown headers (RFC 3261 7.3.1)', () => {
    const h = headers();
    expect(h.getAll('From')).toEqual(['"Doe, John" <sip:john@example.com>;tag=1']);
    expect(h.getAll('Date')).toEqual(['Sat, 15 Oct 2005 04:44:56 GMT']);
    expect(h.getAll('WWW-Authenticate')).toEqual([
      'Digest realm="a", nonce="b", qop="auth,auth-int"',
    ]);
    expect(h.getAll('X-List')).toEqual(['a, b, c']);
    expect(h.getAll('Supported')).toEqual([]);
    expect(h.getRows('Supported')).toEqual(['']);
  });

  it('splits with escaped quotes inside quoted strings', () => {
    expect(splitList('"a \\", b" <sip:x>, <sip:y>')).toEqual(['"a \\", b" <sip:x>', '<sip:y>']);
    expect(splitList(' , a ,, b , ')).toEqual(['a', 'b']);
  });

  it('keeps rows in order; set replaces in place, append adds at the end', () => {
    const h = headers();
    h.set('via', 'SIP/2.0/UDP z.example.com');
    expect([...h].map(([name]) => name)).toEqual([
      'via',
      'From',
      'Contact',
      'Date',
      'WWW-Authenticate',
      'X-List',
      'Supported',
    ]);
    h.append('X-New', 'one');
    h.append('x-new', 'two');
    expect(h.getAll('X-NEW')).toEqual(['one', 'two']);
    expect(h.remove('X-New')).toBe(true);
    expect(h.remove('X-New')).toBe(false);
    expect(h.size).toBe(7);
    h.set('Route', ['<sip:a;lr>', '<sip:b;lr>']);
    expect(h.getRows('Route')).toEqual(['<sip:a;lr>', '<sip:b;lr>']);
  });

  it('takes and gives octet strings, and trims SP/HTAB only', () => {
    const h = new SipHeaders();
    const octets = octetsFromText('café à\u00a0');
    h.set('Subject', `  ${octets} `);
    expect(h.get('Subject')).toBe(octets);
    expect(textFromOctets(h.get('Subject')!)).toBe('café à\u00a0');
    expect(() => h.set('Subject', '☎')).toThrow('octetsFromText');
  });

  it('refuses header injection and bad names', () => {
    const h = new SipHeaders();
    expect(() => h.set('X', 'a\r\nVia: evil')).toThrow(TypeError);
    expect(() => h.append('X', 'a\nb')).toThrow(TypeError);
    expect(() => h.set('Bad Name', 'x')).toThrow(TypeError);
    expect(() => h.append('Bad:Name', 'x')).toThrow(TypeError);
    expect(h.size).toBe(0);
  });

  it('caches typed values until the headers change', () => {
    const h = new SipHeaders([['Max-Forwards', '70']]);
    let calls = 0;
    const parse = (rows: string[]): number => {
      calls++;
      return Number(rows[0]);
    };
    expect(h.typed('max-forwards', parse)).toBe(70);
    expect(h.typed('Max-Forwards', parse)).toBe(70);
    expect(calls).toBe(1);
    h.set('Max-Forwards', '69');
    expect(h.typed('Max-Forwards', parse)).toBe(69);
    expect(calls).toBe(2);
  });

  it('writes canonical names and one Content-Length, in the place of the first', () => {
    const h = new SipHeaders([
      ['v', 'SIP/2.0/UDP a'],
      ['l', '99'],
      ['x-custom', 'kept as given'],
      ['content-length', '12'],
      ['s', ''],
      ['www-authenticate', 'Digest realm="x"'],
    ]);
    expect(h.format(5)).toBe(
      'Via: SIP/2.0/UDP a\r\nContent-Length: 5\r\nx-custom: kept as given\r\n' +
        'Subject:\r\nWWW-Authenticate: Digest realm="x"\r\n',
    );
    expect(new SipHeaders([['To', '<sip:a@b>']]).format(0)).toBe(
      'To: <sip:a@b>\r\nContent-Length: 0\r\n',
    );
  });

  it('clones independently', () => {
    const h = headers();
    const copy = h.clone();
    copy.remove('Via');
    expect(h.count('Via')).toBe(2);
    expect(copy.count('Via')).toBe(0);
  });
});
