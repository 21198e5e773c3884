import { describe, expect, it } from 'vitest';
import {
  ipSetHolds,
  parseIpSet,
  readInboundCarrierMode,
} from '../../../src/call/incoming-carriers.js';

describe("an IncomingCarrier's IP set", () => {
  it('takes addresses and CIDR ranges, IPv4 and IPv6, and drops repeats', () => {
    expect(parseIpSet(' 192.0.2.10, 198.51.100.0/24,2001:db8::/32 ,192.0.2.10')).toEqual({
      entries: ['192.0.2.10', '198.51.100.0/24', '2001:db8::/32'],
    });
  });

  it('names the first entry that is no address or range', () => {
    for (const [text, bad] of [
      ['192.0.2.1,10.0.0.0/33', '10.0.0.0/33'],
      ['sip.example.com', 'sip.example.com'],
      ['192.0.2.300', '192.0.2.300'],
      ['2001:db8::/129', '2001:db8::/129'],
      ['10.0.0.0/', '10.0.0.0/'],
      ['10.0.0.0/8/8', '10.0.0.0/8/8'],
    ]) {
      expect(parseIpSet(text!)).toEqual({
        problem: `${bad} is not an IP address or a CIDR range (like 192.0.2.0/24)`,
      });
    }
    expect(parseIpSet(' , ')).toEqual({
      problem: 'must list at least one IP address or CIDR range',
    });
    const many = Array.from({ length: 101 }, (_, i) => `10.0.${i}.1`).join(',');
    expect(parseIpSet(many)).toEqual({ problem: 'must list at most 100 addresses and ranges' });
  });

  it('holds the addresses of its ranges and no others', () => {
    const set = ['192.0.2.10', '198.51.100.0/24', '2001:db8::/32'];
    for (const inside of [
      '192.0.2.10',
      '198.51.100.0',
      '198.51.100.255',
      '::ffff:198.51.100.7',
      '2001:db8::5',
    ])
      expect(ipSetHolds(set, inside), inside).toBe(true);
    for (const outside of [
      '192.0.2.11',
      '198.51.101.1',
      '2001:db9::1',
      '127.0.0.1',
      'not-an-address',
    ])
      expect(ipSetHolds(set, outside), outside).toBe(false);
  });

  it('is enforced unless the setting says open', () => {
    expect(readInboundCarrierMode(undefined)).toBe('enforce');
    expect(readInboundCarrierMode('')).toBe('enforce');
    expect(readInboundCarrierMode('open')).toBe('open');
    expect(() => readInboundCarrierMode('off')).toThrow('must be enforce or open');
  });
});
