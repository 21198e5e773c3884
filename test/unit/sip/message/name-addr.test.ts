import { describe, expect, it } from 'vitest';
import {
  type SipUri,
  SipParseError,
  formatNameAddr,
  parseNameAddr,
  parseNameAddrList,
  parseUri,
} from '../../../../src/sip/message/index.js';

const sipUri = (uri: unknown): SipUri => uri as SipUri;

describe('parseNameAddr', () => {
  it('reads a quoted display name with quoted-pairs resolved', () => {
    const a = parseNameAddr(
      '"Alice \\"Al\\" Liddell \\\\ x" <sip:alice@example.com>;tag=9fxced76sl',
      'From',
    );
    expect(a.displayName).toBe('Alice "Al" Liddell \\ x');
    expect(sipUri(a.uri).user).toBe('alice');
    expect(a.tag).toBe('9fxced76sl');
  });

  it('reads token display names, with or without space before <', () => {
    expect(parseNameAddr('Bob  Smith <sip:bob@b.example>', 'To').displayName).toBe('Bob  Smith');
    expect(parseNameAddr('Bob<sip:bob@b.example>', 'To').displayName).toBe('Bob');
    expect(parseNameAddr('<sip:bob@b.example>', 'To').displayName).toBeNull();
    expect(parseNameAddr('"" <sip:bob@b.example>', 'To').displayName).toBe('');
  });

  it('decodes a UTF-8 display name to text', () => {
    const octets = Buffer.from('"Zoë Ångström" <sip:z@example.com>', 'utf8').toString('latin1');
    expect(parseNameAddr(octets, 'From').displayName).toBe('Zoë Ångström');
  });

  it('gives parameters after an unbracketed URI to the header (RFC 3261 20.10)', () => {
    const a = parseNameAddr('sip:+12125551212@gw.example.com;user=phone;tag=887s', 'From');
    expect(sipUri(a.uri).params.size).toBe(0);
    expect([...a.params]).toEqual([
      ['user', 'phone'],
      ['tag', '887s'],
    ]);
    const b = parseNameAddr('<sip:+12125551212@gw.example.com;user=phone>;tag=887s', 'From');
    expect(sipUri(b.uri).params.get('user')).toBe('phone');
    expect([...b.params]).toEqual([['tag', '887s']]);
  });

  it('keeps quoted parameter values as written, and names lower-cased', () => {
    const a = parseNameAddr(
      '<sip:a@b>;+sip.instance="<urn:uuid:f81d4fae>";Expires=60 ; q = 0.5;lr',
      'Contact',
    );
    expect([...a.params]).toEqual([
      ['+sip.instance', '"<urn:uuid:f81d4fae>"'],
      ['expires', '60'],
      ['q', '0.5'],
      ['lr', null],
    ]);
  });

  it('accepts other URI schemes', () => {
    expect(parseNameAddr('<tel:+14155550123>;tag=1', 'From').uri).toEqual({
      scheme: 'tel',
      raw: 'tel:+14155550123',
    });
  });

  it.each([
    ['"unterminated <sip:a@b>', 'unterminated quote'],
    ['"a" sip:a@b', 'quoted name without brackets'],
    ['Bell, Alexander <sip:a@b>', 'unquoted comma'],
    ['< sip:a@b>', 'space after <'],
    ['<sip:a@b >', 'space before >'],
    ['<sip:a@b', 'no >'],
    ['sip:a@b?Subject=x', 'headers outside brackets'],
    ['<sip:a@b>;tag', 'tag without value'],
    ['<sip:a@b>;tag="x"', 'quoted tag'],
    ['<sip:a@b>;tag=1;tag=2', 'two tags'],
    ['<sip:a@b>;;x', 'empty parameter'],
    ['<sip:a@b>, <sip:c@d>', 'two values'],
    ['<sip:a@b> junk', 'junk after'],
    ['', 'empty'],
    ['"ctl \u0001" <sip:a@b>', 'control char in quotes'],
  ])('refuses %j (%s)', (text) => {
    expect(() => parseNameAddr(text, 'To')).toThrow('Malformed To header');
  });
});

describe('parseNameAddrList', () => {
  it('splits addresses at commas outside quotes and brackets', () => {
    const list = parseNameAddrList(
      ['"Doe, J" <sip:j@a.example;lr>;q=0.7, sip:k@b.example;q=0.3', '<sip:l@c.example>'],
      'Contact',
      true,
    );
    expect(list.map((a) => [a.displayName, sipUri(a.uri).user, a.params.get('q') ?? null])).toEqual(
      [
        ['Doe, J', 'j', '0.7'],
        [null, 'k', '0.3'],
        [null, 'l', null],
      ],
    );
  });

  it('refuses addr-spec where only name-addr is allowed (Route, Record-Route)', () => {
    expect(() => parseNameAddrList(['sip:p.example;lr'], 'Route', false)).toThrow(SipParseError);
    expect(() => parseNameAddrList(['<sip:p.example;lr>,'], 'Route', false)).toThrow(
      'Malformed Route header',
    );
  });
});

describe('formatNameAddr', () => {
  it('writes a bracketed address that parses back to the same', () => {
    const text = formatNameAddr({
      displayName: 'Zoë "Z" \\',
      uri: parseUri('sip:zoe@example.com;transport=tcp'),
      params: new Map([
        ['tag', 'abc'],
        ['lr', null],
      ]),
    });
    expect(text).toBe(
      `${Buffer.from('"Zoë \\"Z\\" \\\\"', 'utf8').toString('latin1')} <sip:zoe@example.com;transport=tcp>;tag=abc;lr`,
    );
    const back = parseNameAddr(text, 'From');
    expect(back.displayName).toBe('Zoë "Z" \\');
    expect(back.tag).toBe('abc');
  });

  it('adds a tag given apart from the parameters', () => {
    expect(formatNameAddr({ uri: { scheme: 'sip', host: 'b.example' }, tag: 'x1' })).toBe(
      '<sip:b.example>;tag=x1',
    );
  });
});
