import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../src/core/clock.js';
import { ha1 } from '../../../../src/core/digest.js';
import { digestHash, digestResponse } from '../../../../src/sip/auth/digest.js';
import {
  DigestAuthenticator,
  type DigestSecret,
} from '../../../../src/sip/auth/digest-authenticator.js';
import { answerDigestChallenge } from '../../../../src/sip/auth/digest-client.js';

describe('digest arithmetic', () => {
  it('reproduces the RFC 2617 3.5 example', () => {
    const response = digestResponse({
      algorithm: 'MD5',
      ha1: digestHash('MD5', 'Mufasa:testrealm@host.com:Circle Of Life'),
      method: 'GET',
      uri: '/dir/index.html',
      nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
      qop: 'auth',
      nc: '00000001',
      cnonce: '0a4f113b',
    });
    expect(response).toBe('6629fae49393a05397450978507c4ef1');
  });

  it.each([
    ['MD5', '8ca523f5e9506fed4657c9700eebdbec'],
    ['SHA-256', '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1'],
  ] as const)('reproduces the RFC 7616 3.9.1 example with %s', (algorithm, expected) => {
    const response = digestResponse({
      algorithm,
      ha1: digestHash(algorithm, 'Mufasa:http-auth@example.org:Circle of Life'),
      method: 'GET',
      uri: '/dir/index.html',
      nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
      qop: 'auth',
      nc: '00000001',
      cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
    });
    expect(response).toBe(expected);
  });
});

/** The auth-params of a Digest header value, as the message layer hands them over. */
function params(header: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const m of header
    .replace(/^Digest /, '')
    .matchAll(/(\w+)=(?:"((?:[^"\\]|\\.)*)"|([^,\s]+))/g)) {
    map.set(m[1]!.toLowerCase(), m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!);
  }
  return map;
}

describe('DigestAuthenticator with the digest client', () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 20));
  const server = new DigestAuthenticator({ realm: 'voxgate', secret: Buffer.alloc(32, 7), clock });
  const password = 'correct horse';
  const users = new Map<string, DigestSecret>([
    ['alice123456789012', { ha1: (algorithm) => ha1(algorithm, 'alice123456789012', password) }],
  ]);
  const lookup = async (username: string) => users.get(username) ?? null;
  const request = { method: 'REGISTER', uri: 'sip:voxgate' };

  const challenge = (index: number, stale = false) => {
    const p = params(server.challenges(stale)[index]!);
    return {
      realm: p.get('realm')!,
      nonce: p.get('nonce')!,
      opaque: p.get('opaque'),
      algorithm: p.get('algorithm'),
      qop: p.get('qop'),
    };
  };
  const answer = (ch: ReturnType<typeof challenge>, pass = password, nc = 1, req = request) =>
    params(answerDigestChallenge(ch, { username: 'alice123456789012', password: pass }, req, nc)!);

  it('offers SHA-256 then MD5, each with qop=auth (RFC 8760 2.4)', () => {
    const [first, second] = server.challenges();
    expect(first).toMatch(
      /^Digest realm="voxgate", nonce="[A-Za-z0-9_-]{43}", opaque="[0-9a-f]{16}", algorithm=SHA-256, qop="auth"$/,
    );
    expect(second).toMatch(/algorithm=MD5, qop="auth"$/);
    expect(server.challenges(true)[0]).toMatch(/, stale=true$/);
  });

  it.each([0, 1])('accepts a correct answer to challenge %i', async (index) => {
    const verdict = await server.verify(answer(challenge(index)), request, lookup);
    expect(verdict).toEqual({ ok: true, username: 'alice123456789012' });
  });

  it('rejects a wrong password without stale', async () => {
    const verdict = await server.verify(answer(challenge(0), 'wrong'), request, lookup);
    expect(verdict).toEqual({ ok: false, stale: false, reason: 'wrong response (bad password)' });
  });

  it('rejects an unknown user, a forged nonce, another URI and a missing qop', async () => {
    const good = answer(challenge(0));
    expect(
      await server.verify(new Map([...good, ['username', 'bob']]), request, lookup),
    ).toMatchObject({ ok: false, reason: 'unknown user' });
    const forged = new DigestAuthenticator({
      realm: 'voxgate',
      secret: Buffer.alloc(32, 9),
      clock,
    }).challenges()[0]!;
    const forgedAnswer = answer({ ...challenge(0), nonce: params(forged).get('nonce')! });
    expect(await server.verify(forgedAnswer, request, lookup)).toMatchObject({
      ok: false,
      reason: 'nonce was not issued here',
    });
    expect(
      await server.verify(good, { method: 'REGISTER', uri: 'sip:other' }, lookup),
    ).toMatchObject({ ok: false, reason: 'digest uri does not match the Request-URI' });
    const noQop = new Map(good);
    noQop.delete('qop');
    expect(await server.verify(noQop, request, lookup)).toMatchObject({
      ok: false,
      reason: 'qop=auth is required',
    });
    expect(
      await server.verify(new Map([...good, ['realm', 'elsewhere']]), request, lookup),
    ).toMatchObject({ ok: false, reason: 'realm is not voxgate' });
  });

  it('refuses a replayed nonce count and accepts the next one', async () => {
    const ch = challenge(0);
    expect((await server.verify(answer(ch, password, 1), request, lookup)).ok).toBe(true);
    expect(await server.verify(answer(ch, password, 1), request, lookup)).toMatchObject({
      ok: false,
      reason: 'nonce count replayed',
    });
    expect((await server.verify(answer(ch, password, 2), request, lookup)).ok).toBe(true);
  });

  it('answers stale=true for a correct answer to an expired nonce, and only then', async () => {
    const ch = challenge(0);
    clock.advance(5 * 60_000 + 1);
    expect(await server.verify(answer(ch), request, lookup)).toEqual({
      ok: false,
      stale: true,
      reason: 'nonce expired',
    });
    expect(await server.verify(answer(ch, 'wrong'), request, lookup)).toMatchObject({
      ok: false,
      stale: false,
    });
  });

  it('lets the client refuse challenges it cannot answer', () => {
    const ch = challenge(0);
    expect(
      answerDigestChallenge(
        { ...ch, algorithm: 'SHA-512-256' },
        { username: 'a', password: 'b' },
        request,
      ),
    ).toBeNull();
    expect(
      answerDigestChallenge({ ...ch, qop: 'auth-int' }, { username: 'a', password: 'b' }, request),
    ).toBeNull();
  });

  it('answers an RFC 2069 challenge without qop, quoting values with escapes', () => {
    const header = answerDigestChallenge(
      { realm: 'a "quoted" realm', nonce: 'n' },
      { username: 'u', password: 'p' },
      request,
    )!;
    expect(header).toContain('realm="a \\"quoted\\" realm"');
    expect(header).not.toContain('qop=');
    const expected = digestResponse({
      algorithm: 'MD5',
      ha1: digestHash('MD5', 'u:a "quoted" realm:p'),
      method: 'REGISTER',
      uri: 'sip:voxgate',
      nonce: 'n',
    });
    expect(params(header).get('response')).toBe(expected);
  });
});
