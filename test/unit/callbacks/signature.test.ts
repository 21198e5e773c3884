import { describe, expect, it } from 'vitest';
import {
  signatureHeaders,
  signatureV2,
  signatureV3,
  signatureV3Payload,
} from '../../../src/callbacks/signature.js';

// Test vectors of spec/wire-compat.md "Callback signatures".
const TOKEN = 'MY_AUTH_TOKEN';
const NONCE = '12345678901234567890';
const ANSWER = 'https://example.com/answer';

describe('V3 signature', () => {
  it('matches the POST vector', () => {
    const request = {
      method: 'POST' as const,
      url: ANSWER,
      params: { To: '14155550111', From: '14155550100', Direction: 'inbound', CallUUID: 'abc' },
    };
    expect(signatureV3Payload(request)).toBe(
      'https://example.com/answer?CallUUIDabcDirectioninboundFrom14155550100To14155550111',
    );
    expect(signatureV3(TOKEN, request, NONCE)).toBe('GWKrd3YwpgL98Vrulm8cRblAukE36MeB7xfqX2N3lTs=');
  });

  it('matches the GET vector with no parameters', () => {
    const request = { method: 'GET' as const, url: ANSWER, params: {} };
    expect(signatureV3Payload(request)).toBe(ANSWER);
    expect(signatureV3(TOKEN, request, NONCE)).toBe('k2DmGg3hj3mlksbzKIiasjQkkJKUtUnMuS5a1YTtDBA=');
  });

  it('signs a GET with the URL query and the parameters merged and sorted', () => {
    // By hand from the text: URL without query, then `?` and every query parameter (the two
    // already in the URL and the two added) sorted by key then value, joined `k=v&k=v`.
    // Code-unit order puts `CallUUID` before `a`, and the two `a` sort by value.
    // Expected signature: printf '%s' '<payload>.12345678901234567890' |
    //   openssl dgst -sha256 -hmac MY_AUTH_TOKEN -binary | base64
    const request = {
      method: 'GET' as const,
      url: 'https://example.com/answer?b=2&a=1',
      params: { a: '0', CallUUID: 'abc' },
    };
    expect(signatureV3Payload(request)).toBe('https://example.com/answer?CallUUID=abc&a=0&a=1&b=2');
    expect(signatureV3(TOKEN, request, NONCE)).toBe('SqKlnfyOuR4a2Pl4HAGvIDKFYBPZ07FW8KMPszQLzz4=');
  });

  it('signs GET values decoded and keeps a non-default port', () => {
    // `12%23` is the value `12#` on the wire; the receiver's validator sees it decoded.
    const request = {
      method: 'GET' as const,
      url: 'http://127.0.0.1:8080/status?Digits=12%23',
      params: { Event: 'StartStream' },
    };
    expect(signatureV3Payload(request)).toBe(
      'http://127.0.0.1:8080/status?Digits=12#&Event=StartStream',
    );
    expect(signatureV3(TOKEN, request, NONCE)).toBe('RbzOn1ELxbnqUTvEmHYOgPp6XTobi5tOewS6xT+44qE=');
  });

  it('signs a POST to a URL with a query string', () => {
    // By hand from the text: URL + `?`, the URL's own parameters sorted and joined `k=v&...`
    // followed by `.`, then the POST parameters sorted by key as `keyvalue`.
    const request = {
      method: 'POST' as const,
      url: 'https://example.com/answer?z=26&b=2',
      params: { To: '14155550111', From: '14155550100' },
    };
    expect(signatureV3Payload(request)).toBe(
      'https://example.com/answer?b=2&z=26.From14155550100To14155550111',
    );
    expect(signatureV3(TOKEN, request, NONCE)).toBe('UQBuhbDxCg80YYmRCiAuwhTQSbkNA9736EFcIoYNfM0=');
  });

  it('signs a POST without parameters as the client SDKs verify it', () => {
    expect(signatureV3Payload({ method: 'POST', url: ANSWER, params: {} })).toBe(ANSWER);
    expect(signatureV3Payload({ method: 'POST', url: `${ANSWER}?b=2&a=1`, params: {} })).toBe(
      `${ANSWER}?a=1&b=2`,
    );
  });
});

describe('V2 signature', () => {
  it('matches the vector', () => {
    expect(signatureV2(TOKEN, ANSWER, NONCE)).toBe('FbvTFtgMiIJOiP9brARtuzpzlFUe7L1BTDYVN+F9Xog=');
  });

  it('ignores the query string', () => {
    expect(signatureV2(TOKEN, `${ANSWER}?CallUUID=abc&From=14155550100`, NONCE)).toBe(
      'FbvTFtgMiIJOiP9brARtuzpzlFUe7L1BTDYVN+F9Xog=',
    );
  });
});

/** The six values under both header prefixes, as wire-compat.md asks. */
function underBothPrefixes(values: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [suffix, value] of Object.entries(values)) {
    headers[`X-Service-Signature-${suffix}`] = value;
    headers[`X-Plivo-Signature-${suffix}`] = value;
  }
  return headers;
}

describe('signatureHeaders', () => {
  const request = { method: 'POST' as const, url: ANSWER, params: { CallUUID: 'abc' } };
  const tokens = { accountToken: TOKEN, mainToken: 'MAIN_ACCOUNT_TOKEN' };

  it('signs the plain headers with the account token and -Ma- with the main token', () => {
    const headers = signatureHeaders(request, tokens, NONCE);
    expect(headers).toEqual(
      underBothPrefixes({
        V2: signatureV2(TOKEN, ANSWER, NONCE),
        'Ma-V2': signatureV2('MAIN_ACCOUNT_TOKEN', ANSWER, NONCE),
        'V2-Nonce': NONCE,
        V3: signatureV3(TOKEN, request, NONCE),
        'Ma-V3': signatureV3('MAIN_ACCOUNT_TOKEN', request, NONCE),
        'V3-Nonce': NONCE,
      }),
    );
    expect(Object.keys(headers)).toHaveLength(12);
    expect(headers['X-Service-Signature-V2']).not.toBe(headers['X-Service-Signature-Ma-V2']);
  });

  it("signs a main account's own request with its one token in both places", () => {
    const own = { accountToken: TOKEN, mainToken: TOKEN };
    const get = { method: 'GET' as const, url: `${ANSWER}?b=2&a=1`, params: {} };
    for (const signed of [request, get]) {
      const v2 = signatureV2(TOKEN, signed.url, NONCE);
      const v3 = signatureV3(TOKEN, signed, NONCE);
      expect(signatureHeaders(signed, own, NONCE)).toEqual(
        underBothPrefixes({
          V2: v2,
          'Ma-V2': v2,
          'V2-Nonce': NONCE,
          V3: v3,
          'Ma-V3': v3,
          'V3-Nonce': NONCE,
        }),
      );
    }
  });

  it('draws a fresh 20-digit nonce for every request', () => {
    const first = signatureHeaders(request, tokens);
    const second = signatureHeaders(request, tokens);
    expect(first['X-Service-Signature-V2-Nonce']).toMatch(/^\d{20}$/);
    expect(first['X-Service-Signature-V3-Nonce']).toBe(first['X-Service-Signature-V2-Nonce']);
    expect(second['X-Service-Signature-V2-Nonce']).not.toBe(first['X-Service-Signature-V2-Nonce']);
    expect(second['X-Service-Signature-V3']).not.toBe(first['X-Service-Signature-V3']);
    expect(first['X-Plivo-Signature-V3-Nonce']).toBe(first['X-Service-Signature-V3-Nonce']);
  });

  it('never puts a token in a header', () => {
    const values = Object.values(signatureHeaders(request, tokens)).join(' ');
    expect(values).not.toContain(TOKEN);
    expect(values).not.toContain('MAIN_ACCOUNT_TOKEN');
  });
});
