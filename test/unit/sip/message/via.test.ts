import { describe, expect, it } from 'vitest';
import { parseMessage, parseViaList } from '../../../../src/sip/message/index.js';

describe('parseViaList', () => {
  it('reads protocol, transport, host, port and parameters (RFC 3261 20.42)', () => {
    const [via] = parseViaList([
      'SIP/2.0/udp PC33.Atlanta.com:5066;branch=z9hG4bK776asdhds;ttl=16',
    ]);
    expect(via).toMatchObject({
      protocolName: 'SIP',
      protocolVersion: '2.0',
      transport: 'UDP',
      host: 'pc33.atlanta.com',
      port: 5066,
      branch: 'z9hG4bK776asdhds',
    });
    expect(via!.params.get('ttl')).toBe('16');
  });

  it('keeps IPv6 references and reads received and rport (RFC 3581)', () => {
    const [a, b] = parseViaList([
      'SIP/2.0/TCP [2001:db8::9]:5060;rport;branch=z9hG4bK1;received=[2001:db8::10]',
      'SIP/2.0/UDP 192.0.2.4;received=192.0.2.99;rport=5070;branch=z9hG4bK2',
    ]);
    expect(a!.host).toBe('[2001:db8::9]');
    expect(a!.port).toBe(5060);
    expect(a!.params.has('rport')).toBe(true);
    expect(a!.params.get('rport')).toBeNull();
    expect(a!.params.get('received')).toBe('[2001:db8::10]');
    expect(b!.params.get('received')).toBe('192.0.2.99');
    expect(b!.params.get('rport')).toBe('5070');
    expect(parseViaList(['SIP/2.0/UDP h;received=2001:db8::1'])[0]!.params.get('received')).toBe(
      '2001:db8::1',
    );
  });

  it('reads several values in a row and LWS around separators', () => {
    const vias = parseViaList([
      'SIP / 2.0 / WSS  edge.example.com ; branch = z9hG4bKa , SIP/2.0/TLS b.example.com:5061',
    ]);
    expect(vias.map((v) => [v.transport, v.host, v.port, v.branch])).toEqual([
      ['WSS', 'edge.example.com', null, 'z9hG4bKa'],
      ['TLS', 'b.example.com', 5061, null],
    ]);
  });

  it.each([
    ['SIP/2.0/UDP', 'no sent-by'],
    ['SIP/2.0/UDP192.0.2.1', 'no LWS before sent-by'],
    ['SIP/2.0 UDP 192.0.2.1', 'no transport'],
    ['SIP/2.0/UDP 192.0.2.1;;', 'empty parameter'],
    ['SIP/2.0/UDP 192.0.2.1;branch', 'branch without value'],
    ['SIP/2.0/UDP 192.0.2.1;branch="x"', 'quoted branch'],
    ['SIP/2.0/UDP 192.0.2.1;branch=a;branch=b', 'two branches'],
    ['SIP/2.0/UDP 192.0.2.1;received=host.example', 'received not an address'],
    ['SIP/2.0/UDP 192.0.2.1;rport=99999', 'rport out of range'],
    ['SIP/2.0/UDP 192.0.2.1;ttl=256', 'ttl out of range'],
    ['SIP/2.0/UDP 192.0.2.1:', 'empty port'],
    ['SIP/2.0/UDP [::1', 'unclosed IPv6'],
    ['SIP/2.0/UDP a.example,', 'empty value after comma'],
  ])('refuses %j (%s)', (text) => {
    expect(() => parseViaList([text])).toThrow('Malformed Via header');
  });
});

describe('topVia', () => {
  it('reads only the first value, leaving a malformed later one for via()', () => {
    const message = parseMessage(
      Buffer.from(
        'SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP a.example;branch=z9hG4bKtop, junk\r\n' +
          'Via: SIP/2.0/UDP b.example\r\nContent-Length: 0\r\n\r\n',
      ),
    );
    expect(message.topVia().branch).toBe('z9hG4bKtop');
    expect(() => message.via()).toThrow('Malformed Via header');
    expect(() => parseMessage(Buffer.from('SIP/2.0 200 OK\r\n\r\n')).topVia()).toThrow(
      'Missing Via header',
    );
  });
});
