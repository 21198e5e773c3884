import { describe, expect, it } from 'vitest';
import { originationUriProblem } from '../../../src/sip/origination-uri-format.js';

describe('origination URI formats', () => {
  it.each([
    '203.0.113.10',
    '0.0.0.0',
    '255.255.255.255',
    '203.0.113.10:5060',
    '203.0.113.10:1',
    '203.0.113.10:65535',
    'pbx.example.com',
    'PBX.Example.COM',
    'pbx.example.com.',
    'a-b.c1.example',
    'pbx.example.com:5080',
    'sip:alice@pbx.example.com',
    'sip:alice@pbx.example.com:5061',
    'sip:alice@203.0.113.10',
    'sip:+14155550100@carrier.example.net',
    'sip:a.b_c-d%20e@203.0.113.10:5060',
    'SIP:alice@pbx.example.com',
    `${'a'.repeat(63)}.example.com`,
  ])('accepts %s', (uri) => {
    expect(originationUriProblem(uri)).toBeNull();
  });

  it.each([
    ['256.1.1.1', '256.1.1.1 is not an IPv4 address (four numbers 0-255)'],
    ['1.2.3', '1.2.3 is not an IPv4 address (four numbers 0-255)'],
    ['01.2.3.4', '01.2.3.4 is not an IPv4 address (four numbers 0-255)'],
    ['203.0.113.10:0', 'port 0 is not from 1 to 65535'],
    ['203.0.113.10:65536', 'port 65536 is not from 1 to 65535'],
    ['pbx.example.com:080', 'port 080 is not from 1 to 65535'],
    ['pbx.example.com:abc', 'pbx.example.com:abc is not <host> or <host>:<port>'],
    ['pbx.example.com:', 'pbx.example.com: is not <host> or <host>:<port>'],
    ['1.2.3.4:5:6', '1.2.3.4:5:6 is not <host> or <host>:<port>'],
    ['localhost', 'localhost is not fully qualified (it needs a domain)'],
    [
      '-pbx.example.com',
      'FQDN label "-pbx" is not 1 to 63 letters, digits or hyphens without a leading or trailing hyphen',
    ],
    [
      'pbx..example.com',
      'FQDN label "" is not 1 to 63 letters, digits or hyphens without a leading or trailing hyphen',
    ],
    [
      'pbx_1.example.com',
      'FQDN label "pbx_1" is not 1 to 63 letters, digits or hyphens without a leading or trailing hyphen',
    ],
    [
      `${'a'.repeat(64)}.example.com`,
      `FQDN label "${'a'.repeat(64)}" is not 1 to 63 letters, digits or hyphens without a leading or trailing hyphen`,
    ],
    [`${'abcdefghi.'.repeat(26)}com`, 'an FQDN has at most 253 characters'],
    ['example.123', 'the last label of an FQDN cannot be numeric'],
    ['https://pbx.example.com', 'https://pbx.example.com is not <host> or <host>:<port>'],
    ['sip:pbx.example.com', 'a SIP URI must be sip:<user>@<host>'],
    ['sips:alice@pbx.example.com', 'a SIP URI must be sip:<user>@<host>'],
    ['sip:al ice@pbx.example.com', '"al ice" is not a valid SIP user part'],
    ['sip:alice@pbx.example.com:99999', 'port 99999 is not from 1 to 65535'],
    ['sip:alice@pbx', 'pbx is not fully qualified (it needs a domain)'],
  ])('rejects %s', (uri, problem) => {
    expect(originationUriProblem(uri)).toBe(problem);
  });
});
