import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../../src/config/config.js';
import { CarrierRoutes, numberUser } from '../../../../src/call/carriers/carrier-routes.js';
import { readCarrierSettings } from '../../../../src/call/carriers/carrier-settings.js';
import type { SipCarrier } from '../../../../src/call/carriers/sip-carrier.js';

const dir = mkdtempSync(join(tmpdir(), 'voxgate-carriers-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let count = 0;
function file(document: unknown): string {
  const path = join(dir, `c${++count}.json`);
  writeFileSync(path, typeof document === 'string' ? document : JSON.stringify(document));
  return path;
}

const gateway = { host: '192.0.2.10', port: 5060, transport: 'udp' };

function refusal(document: unknown): string {
  const path = file(document);
  try {
    loadConfig({ VOXGATE_CARRIERS_FILE: path });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message.replace(path, '<file>');
  }
  throw new Error('the file was accepted');
}

describe('VOXGATE_CARRIERS_FILE', () => {
  it('reads every field, with defaults for those left out', () => {
    const settings = readCarrierSettings({
      VOXGATE_CARRIERS_FILE: file({
        carriers: [
          {
            name: 'acme',
            gateways: [gateway, { host: 'sip.acme.example', priority: 1, weight: 5 }],
            auth: { username: 'u1', password: 'p1', realm: 'acme' },
            prefixes: ['1', '44'],
            priority: 2,
            weight: 3,
            e164_plus: false,
            tech_prefix: '1234#',
            from_user: 'acct9',
            from_domain: 'trunk.example.com',
            codecs: ['PCMA'],
          },
          { name: 'other', gateways: [gateway] },
        ],
      }),
      VOXGATE_CARRIER_ANSWER_TIMEOUT: '15',
    });
    expect(settings).toMatchObject({
      source: 'VOXGATE_CARRIERS_FILE',
      answerTimeoutMs: 15_000,
      responseTimeoutMs: 4000,
    });
    expect(settings.carriers[0]).toEqual({
      name: 'acme',
      gateways: [
        { host: '192.0.2.10', port: 5060, transport: 'udp', priority: 0, weight: 1 },
        { host: 'sip.acme.example', port: null, transport: null, priority: 1, weight: 5 },
      ],
      auth: { username: 'u1', password: 'p1', realm: 'acme' },
      prefixes: ['1', '44'],
      priority: 2,
      weight: 3,
      format: {
        e164Plus: false,
        techPrefix: '1234#',
        fromUser: 'acct9',
        fromDomain: 'trunk.example.com',
      },
      codecs: ['PCMA'],
      register: null,
      secure: false,
    });
    expect(settings.carriers[1]).toMatchObject({ prefixes: [''], auth: null, priority: 0 });
  });

  it('reads register, the AOR user defaulting to nothing but auth.username', () => {
    const settings = readCarrierSettings({
      VOXGATE_CARRIERS_FILE: file({
        carriers: [
          {
            name: 'reg',
            gateways: [gateway],
            auth: { username: 'u1', password: 'p1' },
            register: { expires: 120, domain: 'sip.reg.example' },
          },
          { name: 'own', gateways: [gateway], register: { user: 'acct7' } },
        ],
      }),
    });
    expect(settings.carriers.map((c) => c.register)).toEqual([
      { expires: 120, user: null, domain: 'sip.reg.example' },
      { expires: 3600, user: 'acct7', domain: null },
    ]);
  });

  it.each([
    [
      { carriers: [{ name: 'acme', gateways: [{ ...gateway, port: 70000 }] }] },
      'carrier "acme" (carriers[0]): gateways[0].port must be a whole number from 1 to 65535',
    ],
    [
      { carriers: [{ name: 'acme', gateways: [{ ...gateway, transport: 'sctp' }] }] },
      'carrier "acme" (carriers[0]): gateways[0].transport must be one of udp, tcp, tls',
    ],
    [
      { carriers: [{ name: 'acme' }] },
      'carrier "acme" (carriers[0]): gateways must be a non-empty array',
    ],
    [
      { carriers: [{ gateways: [gateway] }] },
      'carriers[0]: name must be 1-64 letters, digits, _ . or -',
    ],
    [
      { carriers: [{ name: 'acme', gateways: [gateway], auth: { username: 'u' } }] },
      'carrier "acme" (carriers[0]): auth.password must be a non-empty string',
    ],
    [
      { carriers: [{ name: 'acme', gateways: [gateway], prefix: ['1'] }] },
      'carrier "acme" (carriers[0]): the carrier has an unknown field "prefix"',
    ],
    [
      { carriers: [{ name: 'acme', gateways: [gateway], prefixes: ['+1'] }] },
      'carrier "acme" (carriers[0]): prefixes must be a non-empty array of digit strings',
    ],
    [
      { carriers: [{ name: 'acme', gateways: [gateway], e164_plus: 'no' }] },
      'carrier "acme" (carriers[0]): e164_plus must be true or false',
    ],
    [
      { carriers: [{ name: 'acme', gateways: [gateway], codecs: ['G729'] }] },
      'carrier "acme" (carriers[0]): codecs must be a non-empty array of PCMU, PCMA',
    ],
    [
      {
        carriers: [
          { name: 'acme', gateways: [gateway] },
          { name: 'acme', gateways: [gateway] },
        ],
      },
      'carrier "acme" (carriers[1]): name is used twice',
    ],
    [
      { carriers: [{ name: 'acme', gateways: [gateway], register: { expires: 600 } }] },
      'carrier "acme" (carriers[0]): register.user must be given when the carrier has no auth',
    ],
    [
      { carriers: [{ name: 'acme', gateways: [gateway], register: { user: 'a', expires: 30 } }] },
      'carrier "acme" (carriers[0]): register.expires must be a whole number from 60 to 86400',
    ],
    [
      { carriers: [{ name: 'acme', gateways: [gateway], register: { user: 'a', every: 60 } }] },
      'carrier "acme" (carriers[0]): register has an unknown field "every"',
    ],
    ['{"carriers": [', 'must name a readable JSON file'],
  ])('refuses to start on a bad field, naming the file, the carrier and the field', (doc, rule) => {
    const message = refusal(doc);
    expect(message).toContain('VOXGATE_CARRIERS_FILE="<file>" is invalid: ');
    expect(message).toContain(rule);
  });

  it('is not taken together with VOXGATE_CARRIER_URI', () => {
    expect(() =>
      loadConfig({
        VOXGATE_CARRIERS_FILE: file({ carriers: [{ name: 'a', gateways: [gateway] }] }),
        VOXGATE_CARRIER_URI: 'sip:127.0.0.1',
      }),
    ).toThrow(/cannot be set together with VOXGATE_CARRIER_URI/);
  });
});

describe('VOXGATE_CARRIER_URI', () => {
  it('is one carrier taking every number, its user and password the credentials', () => {
    const { carriers } = readCarrierSettings({
      VOXGATE_CARRIER_URI: 'sip:trunk:S3cr%40t@carrier.example.com:5080;transport=tcp',
    });
    expect(carriers).toEqual([
      expect.objectContaining({
        name: 'default',
        prefixes: [''],
        auth: { username: 'trunk', password: 'S3cr@t', realm: null },
        gateways: [
          { host: 'carrier.example.com', port: 5080, transport: 'tcp', priority: 0, weight: 1 },
        ],
      }),
    ]);
  });

  it('shows no password when it is refused', () => {
    expect(() =>
      loadConfig({ VOXGATE_CARRIER_URI: 'sip:trunk:Hidden-1@host;transport=ws' }),
    ).toThrow(
      'VOXGATE_CARRIER_URI="sip:trunk:***@host;transport=ws" is invalid: transport must be udp, tcp or tls',
    );
  });
});

describe('CarrierRoutes', () => {
  const carrier = (name: string, prefixes: string[], priority = 0, weight = 1): SipCarrier => ({
    name,
    gateways: [{ host: '192.0.2.1', port: 5060, transport: null, priority: 0, weight: 1 }],
    auth: null,
    prefixes,
    priority,
    weight,
    format: { e164Plus: null, techPrefix: '', fromUser: null, fromDomain: null },
    codecs: null,
    register: null,
    secure: false,
  });
  const routes = new CarrierRoutes({
    carriers: [
      carrier('any', ['']),
      carrier('us', ['1'], 5),
      carrier('sf', ['1415']),
      carrier('us-cheap', ['1'], 1),
    ],
    dns: { naptr: async () => [], srv: async () => [], addresses: async () => [] },
    publicHost: 'gw.example.com',
  });

  it('orders by longest prefix, then priority', () => {
    expect(routes.carriersFor('+14155550100').map((c) => c.name)).toEqual([
      'sf',
      'us-cheap',
      'us',
      'any',
    ]);
    expect(routes.carriersFor('+442071234567').map((c) => c.name)).toEqual(['any']);
  });

  it('writes the number as each carrier wants it', () => {
    const plain = carrier('x', ['']);
    expect(numberUser(plain, '+14155550100')).toBe('+14155550100');
    expect(numberUser({ ...plain, format: { ...plain.format, e164Plus: false } }, '+1415')).toBe(
      '1415',
    );
    expect(
      numberUser(
        { ...plain, format: { ...plain.format, e164Plus: true, techPrefix: '99#' } },
        '1415',
      ),
    ).toBe('99%23+1415');
  });

  it('routes to every gateway with the From the carrier wants', async () => {
    const special = {
      ...carrier('x', ['']),
      format: { e164Plus: false, techPrefix: '', fromUser: 'acct9', fromDomain: 'trunk.example' },
    };
    const route = await new CarrierRoutes({
      carriers: [special],
      dns: { naptr: async () => [], srv: async () => [], addresses: async () => [] },
      publicHost: 'gw.example.com',
    }).route('+14155550100', '+14155550111');
    expect(route.attempts.map((a) => [a.target, a.from, a.where])).toEqual([
      ['sip:14155550100@192.0.2.1:5060', 'sip:acct9@trunk.example', 'udp 192.0.2.1:5060'],
    ]);
  });
});
