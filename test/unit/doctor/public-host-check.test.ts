import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { checkPublicHost, isLoopback } from '../../../src/doctor/public-host-check.js';

const nic = (address: string, internal: boolean): NetworkInterfaceInfo =>
  ({
    address,
    internal,
    family: address.includes(':') ? 'IPv6' : 'IPv4',
    netmask: '255.255.255.0',
    mac: '00:00:00:00:00:00',
    cidr: null,
  }) as NetworkInterfaceInfo;

const machine = { lo: [nic('127.0.0.1', true)], eth0: [nic('203.0.113.9', false)] };
const loopbackOnly = { lo: [nic('127.0.0.1', true)] };

describe('the public host check', () => {
  it('knows loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost', '::ffff:127.0.0.1'])
      expect(isLoopback(host)).toBe(true);
    for (const host of ['203.0.113.9', '0.0.0.0', 'sip.example.com', '::'])
      expect(isLoopback(host)).toBe(false);
  });

  it('fails a loopback VOXGATE_PUBLIC_HOST given while SIP listens on a public address', () => {
    const config = loadConfig({
      VOXGATE_SIP_HOST: '203.0.113.9',
      VOXGATE_PUBLIC_HOST: '127.0.0.1',
    });
    expect(checkPublicHost(config, true, machine)).toEqual({
      status: 'FAIL',
      name: 'public-host',
      message:
        'VOXGATE_PUBLIC_HOST is 127.0.0.1, a loopback address, while SIP listens on ' +
        '203.0.113.9: peers elsewhere would send audio and requests to themselves; set ' +
        'VOXGATE_PUBLIC_HOST to the address they reach this machine at',
    });
  });

  it('warns when it is unset and SIP listens on every interface, naming the public ones', () => {
    const result = checkPublicHost(loadConfig({}), false, machine);
    expect(result.status).toBe('warn');
    expect(result.message).toBe(
      'VOXGATE_PUBLIC_HOST is unset (so 127.0.0.1) while SIP listens on 0.0.0.0 (reachable at ' +
        '203.0.113.9): calls with peers elsewhere get no audio; set VOXGATE_PUBLIC_HOST to the ' +
        'address they reach this machine at',
    );
  });

  it('passes loopback everywhere, and a public host with SIP on a public address', () => {
    expect(checkPublicHost(loadConfig({}), false, loopbackOnly)).toEqual({
      status: 'ok',
      name: 'public-host',
      message:
        'VOXGATE_PUBLIC_HOST is 127.0.0.1 and SIP listens on 0.0.0.0: peers on this machine ' +
        '(Firefox never sends WebRTC media to a loopback address: for Firefox here, set ' +
        "VOXGATE_PUBLIC_HOST to this machine's LAN address)",
    });
    const config = loadConfig({ VOXGATE_PUBLIC_HOST: '203.0.113.9' });
    expect(checkPublicHost(config, true, machine)).toEqual({
      status: 'ok',
      name: 'public-host',
      message:
        'VOXGATE_PUBLIC_HOST is 203.0.113.9 (address) and SIP listens on 0.0.0.0 (reachable at ' +
        '203.0.113.9)',
    });
  });

  it('warns of a public host that SIP on loopback only cannot serve, and fails a wildcard', () => {
    const loopbackSip = loadConfig({
      VOXGATE_SIP_HOST: '127.0.0.1',
      VOXGATE_PUBLIC_HOST: 'sip.example.com',
    });
    expect(checkPublicHost(loopbackSip, true, machine).status).toBe('warn');
    const wildcard = loadConfig({ VOXGATE_PUBLIC_HOST: '0.0.0.0' });
    expect(checkPublicHost(wildcard, true, machine).message).toBe(
      'VOXGATE_PUBLIC_HOST is 0.0.0.0, which no peer can send to: set it to the address peers ' +
        'reach this machine at',
    );
  });
});
