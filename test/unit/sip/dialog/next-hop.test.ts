import { describe, expect, it } from 'vitest';
import {
  nextHopUri,
  requestTarget,
  resolveUri,
  type HostResolver,
} from '../../../../src/sip/dialog/next-hop.js';
import { parseUri } from '../../../../src/sip/message/index.js';

const noDns: HostResolver = (host) => Promise.reject(new Error(`no lookup expected for ${host}`));

describe('the next hop of a request in a dialog', () => {
  it('is the remote target without a route set, and the first route with one', () => {
    expect(nextHopUri('sip:bob@192.0.2.4:5070', []).host).toBe('192.0.2.4');
    const routes = ['<sip:p1.example.com;lr>', '<sip:p2.example.com;lr>'];
    expect(nextHopUri('sip:bob@192.0.2.4', routes).host).toBe('p1.example.com');
    // A strict router is the next hop too (its URI is the Request-URI).
    expect(nextHopUri('sip:bob@192.0.2.4', ['<sip:strict.example.com>']).host).toBe(
      'strict.example.com',
    );
  });

  it('refuses a target it cannot send to', () => {
    expect(() => nextHopUri('tel:+14155550100', [])).toThrow(/tel: URI/);
  });

  it('keeps Request-URI and Route as they are with a loose router first', () => {
    expect(requestTarget('sip:bob@192.0.2.4', ['<sip:p1;lr>', '<sip:p2>'])).toEqual({
      uri: 'sip:bob@192.0.2.4',
      routes: ['<sip:p1;lr>', '<sip:p2>'],
    });
    expect(requestTarget('sip:bob@192.0.2.4', [])).toEqual({
      uri: 'sip:bob@192.0.2.4',
      routes: [],
    });
  });
});

describe('resolving a SIP URI to a destination (RFC 3263 without DNS records)', () => {
  const resolve = (uri: string, resolver: HostResolver = noDns) =>
    resolveUri(parseUri(uri), resolver);

  it('takes an IP literal as it is, UDP and port 5060 by default', async () => {
    expect(await resolve('sip:bob@192.0.2.4')).toEqual({
      protocol: 'UDP',
      address: { address: '192.0.2.4', port: 5060 },
    });
    expect(await resolve('sip:[2001:db8::1]:5070')).toEqual({
      protocol: 'UDP',
      address: { address: '2001:db8::1', port: 5070 },
    });
  });

  it('follows the transport parameter, and sips means TLS on 5061', async () => {
    expect(await resolve('sip:192.0.2.4;transport=tcp')).toMatchObject({
      protocol: 'TCP',
      address: { port: 5060 },
    });
    expect(await resolve('sips:192.0.2.4')).toMatchObject({
      protocol: 'TLS',
      address: { port: 5061 },
    });
    expect(await resolve('sip:192.0.2.4:8080;transport=ws')).toMatchObject({
      protocol: 'WS',
      address: { port: 8080 },
    });
    await expect(resolve('sip:192.0.2.4;transport=sctp')).rejects.toThrow(/transport=sctp/);
  });

  it('looks a host name up through the injected resolver, and honours maddr', async () => {
    const asked: string[] = [];
    const resolver: HostResolver = async (host) => {
      asked.push(host);
      return '198.51.100.20';
    };
    expect(await resolve('sip:bob@trunk.example.com:5080', resolver)).toEqual({
      protocol: 'UDP',
      address: { address: '198.51.100.20', port: 5080 },
    });
    expect(asked).toEqual(['trunk.example.com']);
    expect(await resolve('sip:bob@trunk.example.com;maddr=192.0.2.8')).toMatchObject({
      address: { address: '192.0.2.8' },
    });
  });
});
