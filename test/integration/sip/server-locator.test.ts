import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseUri } from '../../../src/sip/message/index.js';
import {
  locateSipServers,
  LocateError,
  srvOrder,
  systemSipDns,
  type SipDns,
} from '../../../src/sip/dialog/server-locator.js';
import { startDnsServer } from '../../support/dns-server.js';

/** RFC 3263 against a DNS server on loopback, through node's resolver as the gateway uses it. */
let dnsServer: Awaited<ReturnType<typeof startDnsServer>>;
let dns: SipDns;

beforeAll(async () => {
  dnsServer = await startDnsServer({
    // NAPTR prefers TCP; its SRV has two priorities.
    'pbx.example.test': {
      NAPTR: [
        {
          order: 20,
          preference: 1,
          flags: 's',
          services: 'SIP+D2U',
          regexp: '',
          replacement: '_sip._udp.pbx.example.test',
        },
        {
          order: 10,
          preference: 1,
          flags: 's',
          services: 'SIP+D2T',
          regexp: '',
          replacement: '_sip._tcp.pbx.example.test',
        },
        {
          order: 5,
          preference: 1,
          flags: 's',
          services: 'SIP+D2X',
          regexp: '',
          replacement: '_sip._sctp.pbx.example.test',
        },
      ],
      A: ['192.0.2.99'],
    },
    '_sip._tcp.pbx.example.test': {
      SRV: [
        { priority: 20, weight: 0, port: 5070, target: 'backup.example.test' },
        { priority: 10, weight: 5, port: 5080, target: 'main.example.test' },
      ],
    },
    '_sip._udp.pbx.example.test': {
      SRV: [{ priority: 1, weight: 0, port: 5090, target: 'main.example.test' }],
    },
    'main.example.test': { A: ['192.0.2.10'], AAAA: ['2001:db8::10'] },
    'backup.example.test': { A: ['192.0.2.20'] },
    // No NAPTR: SRV per transport, UDP first.
    'srv-only.example.test': { A: ['192.0.2.98'] },
    '_sip._udp.srv-only.example.test': {
      SRV: [{ priority: 1, weight: 1, port: 5062, target: 'main.example.test' }],
    },
    // Neither: A on 5060.
    'plain.example.test': { A: ['192.0.2.30'] },
    // sips: only _sips._tcp counts.
    'secure.example.test': { A: ['192.0.2.40'] },
    '_sips._tcp.secure.example.test': {
      SRV: [{ priority: 1, weight: 1, port: 5161, target: 'backup.example.test' }],
    },
    '_sip._udp.secure.example.test': {
      SRV: [{ priority: 1, weight: 1, port: 5999, target: 'main.example.test' }],
    },
  });
  dns = systemSipDns([dnsServer.server]);
});
afterAll(() => dnsServer.close());

const locate = (uri: string) => locateSipServers(parseUri(uri), dns);

it('uses an IP literal as it is, on the default port or the one given', async () => {
  expect(await locate('sip:1000@198.51.100.7')).toEqual([
    { protocol: 'UDP', address: { address: '198.51.100.7', port: 5060 } },
  ]);
  expect(await locate('sip:1000@198.51.100.7:5080;transport=tcp')).toEqual([
    { protocol: 'TCP', address: { address: '198.51.100.7', port: 5080 } },
  ]);
});

it('follows NAPTR (order first, unknown services skipped) to SRV, by priority, to A and AAAA', async () => {
  const found = await locate('sip:1000@pbx.example.test');
  expect(found).toEqual([
    { protocol: 'TCP', address: { address: '192.0.2.10', port: 5080 } },
    { protocol: 'TCP', address: { address: '2001:db8::10', port: 5080 } },
    { protocol: 'TCP', address: { address: '192.0.2.20', port: 5070 } },
  ]);
  expect(dnsServer.queries).toContain('NAPTR pbx.example.test');
  expect(dnsServer.queries).not.toContain('SRV _sip._sctp.pbx.example.test');
});

it('keeps to the transport a URI names', async () => {
  expect(await locate('sip:1000@pbx.example.test;transport=udp')).toEqual([
    { protocol: 'UDP', address: { address: '192.0.2.10', port: 5090 } },
    { protocol: 'UDP', address: { address: '2001:db8::10', port: 5090 } },
  ]);
});

it('without NAPTR asks SRV per transport, and without SRV uses A on 5060', async () => {
  expect(await locate('sip:srv-only.example.test')).toEqual([
    { protocol: 'UDP', address: { address: '192.0.2.10', port: 5062 } },
    { protocol: 'UDP', address: { address: '2001:db8::10', port: 5062 } },
  ]);
  expect(await locate('sip:plain.example.test')).toEqual([
    { protocol: 'UDP', address: { address: '192.0.2.30', port: 5060 } },
  ]);
});

it('with an explicit port skips NAPTR and SRV', async () => {
  dnsServer.queries.length = 0;
  expect(await locate('sip:pbx.example.test:5099')).toEqual([
    { protocol: 'UDP', address: { address: '192.0.2.99', port: 5099 } },
  ]);
  expect(dnsServer.queries.filter((q) => !q.startsWith('A'))).toEqual([]);
});

it('locates a sips URI over TLS only', async () => {
  expect(await locate('sips:secure.example.test')).toEqual([
    { protocol: 'TLS', address: { address: '192.0.2.20', port: 5161 } },
  ]);
});

it('names the host that does not resolve', async () => {
  const error = await locate('sip:1000@nowhere.example.test').catch((e: Error) => e);
  expect(error).toBeInstanceOf(LocateError);
  expect((error as Error).message).toBe('nowhere.example.test has no A or AAAA record');
});

it('orders SRV targets by priority, and within one by weight (RFC 2782)', () => {
  const records = [
    { priority: 2, weight: 0, name: 'c' },
    { priority: 1, weight: 90, name: 'a' },
    { priority: 1, weight: 10, name: 'b' },
  ];
  const firsts = { a: 0, b: 0 };
  let seed = 1;
  const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  for (let k = 0; k < 2000; k++) {
    const order = srvOrder(records, random).map((r) => r.name);
    expect(order[2]).toBe('c');
    firsts[order[0] as 'a' | 'b']++;
  }
  expect(firsts.a / 2000).toBeGreaterThan(0.85);
  expect(firsts.a / 2000).toBeLessThan(0.95);
});
