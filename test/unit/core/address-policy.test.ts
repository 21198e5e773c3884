import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { AddressPolicy, canonicalAddress } from '../../../src/core/address-policy.js';

const selfHosted = new AddressPolicy({ profile: 'self-hosted', ownPorts: [8080, 5060] });
const shared = new AddressPolicy({ profile: 'shared', ownPorts: [8080] });

const ruleOf = (policy: AddressPolicy, address: string, port = 80) =>
  policy.refusal(address, port)?.rule ?? null;

describe('AddressPolicy', () => {
  it.each([
    ['169.254.169.254', 'link-local', '169.254.0.0/16'],
    ['169.254.0.1', 'link-local', '169.254.0.0/16'],
    ['fe80::1', 'link-local', 'fe80::/10'],
    ['febf:ffff::1', 'link-local', 'fe80::/10'],
    ['0.0.0.0', 'unspecified', '0.0.0.0/8'],
    ['0.1.2.3', 'unspecified', '0.0.0.0/8'],
    ['::', 'unspecified', '::/128'],
    ['224.0.0.1', 'multicast', '224.0.0.0/4'],
    ['239.255.255.250', 'multicast', '224.0.0.0/4'],
    ['255.255.255.255', 'multicast', '255.255.255.255/32'],
    ['ff02::1', 'multicast', 'ff00::/8'],
  ])('refuses %s in every profile (%s, %s)', (address, rule, range) => {
    for (const policy of [selfHosted, shared]) {
      expect(policy.refusal(address, 80)).toEqual({
        rule,
        address: canonicalAddress(address),
        range,
      });
    }
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
  ])('allows %s self-hosted and refuses it shared (%s)', (address, rule) => {
    expect(ruleOf(selfHosted, address)).toBeNull();
    expect(ruleOf(shared, address)).toBe(rule);
  });

  it.each([
    '8.8.8.8',
    '93.184.216.34',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.255.255',
    '2606:4700::1111',
    'fec0::1',
  ])('allows the public address %s in both profiles', (address) => {
    expect(ruleOf(selfHosted, address)).toBeNull();
    expect(ruleOf(shared, address)).toBeNull();
  });

  it('checks an IPv4-mapped IPv6 address as the IPv4 address it reaches', () => {
    for (const mapped of ['::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '[::FFFF:169.254.169.254]'])
      expect(selfHosted.refusal(mapped, 80)).toEqual({
        rule: 'link-local',
        address: '169.254.169.254',
        range: '169.254.0.0/16',
      });
    expect(ruleOf(shared, '::ffff:127.0.0.1')).toBe('loopback');
    expect(ruleOf(shared, '::ffff:10.0.0.1')).toBe('private');
    expect(ruleOf(selfHosted, '::ffff:127.0.0.1', 8080)).toBe('own-port');
    expect(ruleOf(selfHosted, '::ffff:8.8.8.8')).toBeNull();
  });

  it("refuses the gateway's own ports on this machine only, whatever the profile", () => {
    expect(selfHosted.refusal('127.0.0.1', 8080)).toEqual({
      rule: 'own-port',
      address: '127.0.0.1',
      range: 'port 8080',
    });
    expect(ruleOf(selfHosted, '127.0.0.2', 5060)).toBe('own-port');
    expect(ruleOf(selfHosted, '::1', 8080)).toBe('own-port');
    expect(ruleOf(selfHosted, '127.0.0.1', 8081)).toBeNull();
    // Another machine's port 8080 is not the gateway's.
    expect(ruleOf(selfHosted, '93.184.216.34', 8080)).toBeNull();
    // An address of one of this machine's interfaces is this machine.
    const own = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry && !entry.internal && entry.family === 'IPv4');
    if (own) expect(ruleOf(selfHosted, own.address, 8080)).toBe('own-port');
    // In the shared profile loopback is refused anyway; its own-port rule still names the port.
    expect(ruleOf(shared, '127.0.0.1', 8080)).toBe('loopback');
  });

  it('treats what is not an IP address as refused', () => {
    expect(ruleOf(selfHosted, 'example.com')).toBe('unspecified');
  });
});

describe('canonicalAddress', () => {
  it.each([
    ['10.0.0.1', '10.0.0.1'],
    ['::FFFF:10.0.0.1', '10.0.0.1'],
    ['::ffff:0a00:0001', '10.0.0.1'],
    ['[::1]', '0:0:0:0:0:0:0:1'],
    ['fe80::1%eth0', 'fe80:0:0:0:0:0:0:1'],
    ['::', '0:0:0:0:0:0:0:0'],
    ['2001:db8::ffff:1.2.3.4', '2001:db8:0:0:0:ffff:102:304'],
    ['host.example', null],
  ])('%s is %s', (input, expected) => {
    expect(canonicalAddress(input)).toBe(expected);
  });
});
