import { describe, expect, it } from 'vitest';
import {
  SipParseError,
  formatUri,
  isSipUri,
  parseAddressUri,
  parseUri,
} from '../../../../src/sip/message/index.js';

describe('parseUri', () => {
  it('reads every part of a SIP URI (RFC 3261 19.1.1)', () => {
    const uri = parseUri(
      'sips:alice:secret@Atlanta.Example.COM:5061;transport=TCP;lr;maddr=239.255.255.1?Subject=hi&Priority=urgent',
    );
    expect(uri).toMatchObject({
      scheme: 'sips',
      user: 'alice',
      rawUser: 'alice',
      password: 'secret',
      host: 'atlanta.example.com',
      port: 5061,
    });
    expect([...uri.params]).toEqual([
      ['transport', 'TCP'],
      ['lr', null],
      ['maddr', '239.255.255.1'],
    ]);
    expect([...uri.headers]).toEqual([
      ['Subject', 'hi'],
      ['Priority', 'urgent'],
    ]);
  });

  it('takes the scheme in any case and lower-cases host and parameter names', () => {
    const uri = parseUri('SIP:Bob@EXAMPLE.org;Transport=udp');
    expect(uri.scheme).toBe('sip');
    expect(uri.user).toBe('Bob');
    expect(uri.host).toBe('example.org');
    expect(uri.params.get('transport')).toBe('udp');
  });

  it('keeps the user part raw and decoded', () => {
    const uri = parseUri('sip:%61lice%20smith;phone-context=+1@example.com');
    expect(uri.rawUser).toBe('%61lice%20smith;phone-context=+1');
    expect(uri.user).toBe('alice smith;phone-context=+1');
  });

  it('resolves escapes once, never recursively (RFC 4475 3.1.1.3)', () => {
    const uri = parseUri('sip:host;n%61me=v%61lue%25%34%31?h%3D=%3Cx%3E');
    expect(uri.params.get('name')).toBe('value%41');
    expect(uri.headers.get('h=')).toBe('<x>');
  });

  it('accepts IPv6 references, with and without a port', () => {
    expect(parseUri('sip:[2001:DB8::1]').host).toBe('[2001:db8::1]');
    const uri = parseUri('sip:user@[::ffff:192.0.2.1]:5070;transport=tcp');
    expect(uri.host).toBe('[::ffff:192.0.2.1]');
    expect(uri.port).toBe(5070);
  });

  it('accepts IPv4 addresses and fully qualified names with a trailing dot', () => {
    expect(parseUri('sip:192.0.2.1:5060').host).toBe('192.0.2.1');
    expect(parseUri('sip:a.example.com.').host).toBe('a.example.com.');
    expect(parseUri('sip:3com.example').host).toBe('3com.example');
  });

  it.each([
    ['sip:', 'no host'],
    ['sip:user@', 'no host after @'],
    ['sip:@example.com', 'empty user'],
    ['sip:[2001:db8::1', 'unclosed IPv6 reference'],
    ['sip:[2001:db8::g]', 'bad IPv6 address'],
    ['sip:[fe80::1%25eth0]', 'IPv6 zone'],
    ['sip:example.com:65536', 'port out of range'],
    ['sip:example.com:', 'empty port'],
    ['sip:-a.example.com', 'label starting with -'],
    ['sip:a-.example.com', 'label ending with -'],
    ['sip:a..example.com', 'empty label'],
    ['sip:192.0.2.1234', 'numeric toplabel'],
    ['sip:a b@example.com', 'space'],
    ['sip:a@example.com;;lr', 'empty parameter name'],
    ['sip:a@example.com;lr;lr', 'repeated parameter'],
    ['sip:a@example.com;x=', 'empty parameter value'],
    ['sip:a%2@example.com', 'short escape'],
    ['sip:a%zz@example.com', 'bad escape'],
    ['sip:a@example.com?x', 'header without value'],
    ['sip:a@example.com>', 'trailing junk'],
    ['sip:a@b@example.com', 'two @'],
  ])('refuses %s (%s)', (text) => {
    expect(() => parseUri(text)).toThrow(SipParseError);
  });

  it('refuses other schemes as unsupported (a UAS answers 416)', () => {
    try {
      parseUri('tel:+14155550123');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(SipParseError);
      expect((error as SipParseError).kind).toBe('unsupported-uri-scheme');
    }
  });
});

describe('parseAddressUri', () => {
  it('keeps other schemes as an absolute URI', () => {
    const uri = parseAddressUri('TEL:+1-415-555-0123;phone-context=example.com');
    expect(isSipUri(uri)).toBe(false);
    expect(uri).toEqual({ scheme: 'tel', raw: 'TEL:+1-415-555-0123;phone-context=example.com' });
    expect(parseAddressUri('urn:service:sos').scheme).toBe('urn');
  });

  it.each(['mailto', ':no-scheme', '1tel:x', 'tel:a b', 'tel:<x>', 'http:'])(
    'refuses %s',
    (text) => {
      expect(() => parseAddressUri(text)).toThrow(SipParseError);
    },
  );
});

describe('formatUri', () => {
  it('writes what parseUri reads', () => {
    for (const text of [
      'sip:alice@atlanta.example.com',
      'sips:alice:pw@[2001:db8::1]:5061;transport=tcp;lr',
      'sip:gw.example.com;user=phone?Subject=hi&Route=%3Csip:x%3E',
      'sip:%00@host',
    ]) {
      expect(formatUri(parseUri(text))).toBe(text);
    }
  });

  it('escapes what must be escaped in each part', () => {
    expect(
      formatUri({
        scheme: 'sip',
        user: 'sips:user@example.com',
        host: 'example.net',
        params: new Map([['name', 'value%41']]),
        headers: new Map([['Route', '<sip:a;lr>']]),
      }),
    ).toBe('sip:sips%3Auser%40example.com@example.net;name=value%2541?Route=%3Csip:a%3Blr%3E');
  });

  it('writes an absolute URI as it was', () => {
    expect(formatUri({ scheme: 'tel', raw: 'tel:+1234' })).toBe('tel:+1234');
  });
});
