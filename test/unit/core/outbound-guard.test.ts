import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { OutboundGuard, OutboundRefused, tableResolver } from '../../../src/core/outbound-guard.js';

const hosts: Record<string, string[]> = {
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['93.184.216.34', '169.254.169.254'],
  'app.test': ['93.184.216.34', '2606:4700::1111'],
  'inside.test': ['10.0.0.7'],
};
const missing = async (host: string): Promise<LookupAddress[]> => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

function guard(profile: 'self-hosted' | 'shared' = 'self-hosted') {
  const refused: { rule: string; url: string }[] = [];
  const g = new OutboundGuard({
    policy: { profile, ownPorts: [8080] },
    resolve: tableResolver(hosts, missing),
    onRefused: (error, url) => refused.push({ rule: error.rule, url: url.href }),
  });
  return { g, refused };
}

describe('OutboundGuard', () => {
  it('refuses a literal address, naming the address, its range and the rule', async () => {
    const { g, refused } = guard();
    const error = await g.pin('http://169.254.169.254/latest/meta-data').catch((e: Error) => e);
    expect(error).toBeInstanceOf(OutboundRefused);
    expect((error as Error).message).toBe(
      '169.254.169.254 is a link-local address (169.254.0.0/16): refused by the outbound rule link-local',
    );
    expect(refused).toEqual([
      { rule: 'link-local', url: 'http://169.254.169.254/latest/meta-data' },
    ]);
  });

  it('refuses a name when any address it resolves to is refused', async () => {
    const { g } = guard();
    await expect(g.pin('https://metadata.test/x')).rejects.toThrow(
      'metadata.test resolves to 169.254.169.254, a link-local address (169.254.0.0/16): refused by the outbound rule link-local',
    );
    await expect(g.pin('https://mixed.test/x')).rejects.toBeInstanceOf(OutboundRefused);
  });

  it('refuses literal IPv6 and IPv4-mapped hosts, and ports of the gateway itself', async () => {
    const { g } = guard();
    await expect(g.pin('http://[::ffff:169.254.169.254]/')).rejects.toThrow(/rule link-local/);
    await expect(g.pin('ws://[fe80::1]:9000/')).rejects.toThrow(/rule link-local/);
    await expect(g.pin('http://127.0.0.1:8080/v1/')).rejects.toThrow(
      "127.0.0.1 port 8080 is one of the gateway's own listening ports: refused by the outbound rule own-port",
    );
    // WHATWG URL parsing turns other spellings of an address into the dotted quad first.
    await expect(g.pin('http://2852039166/')).rejects.toThrow(/169\.254\.169\.254/);
    await expect(g.pin('http://0xa9.0xfe.0xa9.0xfe/')).rejects.toThrow(/rule link-local/);
  });

  it('pins an allowed URL to its first checked address; its lookup answers nothing else', async () => {
    const { g } = guard();
    const target = await g.pin('wss://app.test/stream');
    expect(target).toMatchObject({
      host: 'app.test',
      port: 443,
      address: '93.184.216.34',
      family: 4,
    });
    const one = await new Promise((resolve) =>
      target.lookup('app.test', {}, (_e, address, family) => resolve({ address, family })),
    );
    expect(one).toEqual({ address: '93.184.216.34', family: 4 });
    const all = await new Promise((resolve) =>
      target.lookup('app.test', { all: true }, (_e, addresses) => resolve(addresses)),
    );
    expect(all).toEqual([{ address: '93.184.216.34', family: 4 }]);
  });

  it('allows private addresses self-hosted and refuses them in the shared profile', async () => {
    await expect(guard().g.pin('http://inside.test/')).resolves.toMatchObject({
      address: '10.0.0.7',
    });
    await expect(guard().g.pin('http://127.0.0.1:9000/')).resolves.toMatchObject({ port: 9000 });
    await expect(guard('shared').g.pin('http://inside.test/')).rejects.toThrow(
      'inside.test resolves to 10.0.0.7, a private address (10.0.0.0/8): refused by the outbound rule private of the shared profile',
    );
    await expect(guard('shared').g.pin('http://127.0.0.1:9000/')).rejects.toThrow(/rule loopback/);
  });

  it('passes on a name that does not resolve; refusalOf lets it through to be checked at use', async () => {
    const { g } = guard();
    await expect(g.pin('http://nowhere.test/')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(await g.refusalOf('http://nowhere.test/')).toBeNull();
    expect(await g.refusalOf('http://app.test/')).toBeNull();
    expect((await g.refusalOf('http://metadata.test/'))?.rule).toBe('link-local');
  });

  it('refuses schemes other than http, https, ws and wss', async () => {
    await expect(guard().g.pin('file:///etc/passwd')).rejects.toThrow(TypeError);
    await expect(guard().g.pin('gopher://127.0.0.1/')).rejects.toThrow(/scheme gopher:/);
  });
});
