import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { answerDigestChallenge } from '../../../../src/sip/auth/digest-client.js';
import { DigestAuthenticator } from '../../../../src/sip/auth/digest-authenticator.js';
import { digestHash } from '../../../../src/sip/auth/digest.js';
import { SipRequest, parseMessage } from '../../../../src/sip/message/index.js';
import type { Flow } from '../../../../src/sip/transport/flow.js';
import {
  RequestAuthenticator,
  type RequestAuthenticatorOptions,
} from '../../../../src/sip/ua/request-authenticator.js';

/**
 * INVITE authentication, as the call layer will ask it: digest against the calling
 * endpoint's HA1 (the From user), or on WebSocket a bearer token that allows outgoing calls.
 */
const clock = new ManualScheduler(Date.UTC(2026, 10, 21));
const ACCOUNT = 'MAAAAAAAAAAAAAAAAAAA';
const KEY = 'k'.repeat(40);
const authOptions: RequestAuthenticatorOptions = {
  clock,
  authenticator: new DigestAuthenticator({ realm: 'voxgate', secret: Buffer.alloc(32, 1), clock }),
  directory: {
    findUser: async (name) =>
      name === 'alice123'
        ? {
            aor: { kind: 'endpoint', account: ACCOUNT, subaccount: null, id: '42', user: name },
            ha1: (a) => digestHash(a, 'alice123:voxgate:s3cret'),
          }
        : null,
    tokenKey: async (id) => (id === ACCOUNT ? KEY : null),
    accountOf: async (id) => (id === ACCOUNT ? { account: ACCOUNT, subaccount: null } : null),
  },
};
const auth = new RequestAuthenticator(authOptions);

const flow = (protocol: Flow['protocol']): Flow => ({
  protocol,
  local: { address: '127.0.0.1', port: 5060 },
  remote: { address: '127.0.0.1', port: 40000 },
  ...(protocol === 'UDP' ? {} : { connectionId: 'c1' }),
});

function invite(authorization?: string): SipRequest {
  const text = [
    'INVITE sip:+15550100@127.0.0.1 SIP/2.0',
    'Via: SIP/2.0/UDP 127.0.0.1:40000;branch=z9hG4bKauth1',
    'From: <sip:alice123@127.0.0.1>;tag=a',
    'To: <sip:+15550100@127.0.0.1>',
    'Call-ID: auth-1',
    'CSeq: 1 INVITE',
    ...(authorization ? [`Authorization: ${authorization}`] : []),
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  return parseMessage(Buffer.from(text)) as SipRequest;
}

const token = (voice: { incoming_allow: boolean; outgoing_allow: boolean }) =>
  new SignJWT({ per: { voice } })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ACCOUNT)
    .setSubject('agent')
    .setIssuedAt(clock.now() / 1000)
    .setExpirationTime(clock.now() / 1000 + 600)
    .sign(new TextEncoder().encode(KEY));

describe('RequestAuthenticator for INVITE', () => {
  it('challenges an INVITE without credentials, then accepts the From user digest', async () => {
    const first = await auth.authenticate(invite(), flow('UDP'), 'call', 'alice123');
    expect(first.ok).toBe(false);
    const challenge = !first.ok ? first.response : null;
    expect(challenge?.status).toBe(401);
    const offer = challenge!.wwwAuthenticate()[0]!;
    const answer = answerDigestChallenge(
      {
        realm: 'voxgate',
        nonce: offer.params.get('nonce')!,
        opaque: offer.params.get('opaque'),
        algorithm: offer.params.get('algorithm'),
        qop: offer.params.get('qop'),
      },
      { username: 'alice123', password: 's3cret' },
      { method: 'INVITE', uri: 'sip:+15550100@127.0.0.1' },
    )!;
    const second = await auth.authenticate(invite(answer), flow('UDP'), 'call', 'alice123');
    expect(second).toEqual({
      ok: true,
      aor: expect.objectContaining({ kind: 'endpoint', id: '42' }),
    });
  });

  it('accepts a bearer token with outgoing_allow on WebSocket', async () => {
    const jwt = await token({ incoming_allow: false, outgoing_allow: true });
    const result = await auth.authenticate(invite(`Bearer ${jwt}`), flow('WS'), 'call', 'alice123');
    expect(result).toEqual({
      ok: true,
      aor: expect.objectContaining({ kind: 'token', id: 'agent' }),
    });
  });

  it('refuses a bearer token without outgoing_allow with 403 insufficient_scope', async () => {
    const jwt = await token({ incoming_allow: true, outgoing_allow: false });
    const result = await auth.authenticate(
      invite(`Bearer ${jwt}`),
      flow('WSS'),
      'call',
      'alice123',
    );
    expect(result.ok).toBe(false);
    const response = !result.ok ? result.response : null;
    expect(response?.status).toBe(403);
    expect(response?.headers.get('WWW-Authenticate')).toContain('error="insufficient_scope"');
  });

  it('does not take a bearer token over UDP: the client is challenged for digest', async () => {
    const jwt = await token({ incoming_allow: true, outgoing_allow: true });
    const result = await auth.authenticate(
      invite(`Bearer ${jwt}`),
      flow('UDP'),
      'call',
      'alice123',
    );
    expect(!result.ok && result.response.status).toBe(401);
  });
});

describe('the digest challenges each client gets', () => {
  const offeredTo = async (
    authenticator: RequestAuthenticator,
    protocol: Flow['protocol'],
    userAgent?: string,
  ) => {
    const request = invite();
    if (userAgent) request.headers.set('User-Agent', userAgent);
    const result = await authenticator.authenticate(request, flow(protocol), 'call', 'alice123');
    expect(result.ok).toBe(false);
    return (!result.ok ? result.response : null)!
      .wwwAuthenticate()
      .map((c) => c.params.get('algorithm'));
  };

  it('by default: MD5 alone over UDP, TCP and TLS; SHA-256 then MD5 over WS and WSS', async () => {
    expect(await offeredTo(auth, 'UDP')).toEqual(['MD5']);
    expect(await offeredTo(auth, 'TCP')).toEqual(['MD5']);
    expect(await offeredTo(auth, 'TLS')).toEqual(['MD5']);
    expect(await offeredTo(auth, 'WS')).toEqual(['SHA-256', 'MD5']);
    expect(await offeredTo(auth, 'WSS')).toEqual(['SHA-256', 'MD5']);
  });

  it('follows the configured lists, and the User-Agent override on every transport', async () => {
    const configured = new RequestAuthenticator({
      ...authOptions,
      offer: { sip: ['SHA-256', 'MD5'], websocket: ['SHA-256'], md5OnlyAgents: ['oldphone'] },
    });
    expect(await offeredTo(configured, 'UDP')).toEqual(['SHA-256', 'MD5']);
    expect(await offeredTo(configured, 'WS')).toEqual(['SHA-256']);
    expect(await offeredTo(configured, 'WS', 'OldPhone/2.1')).toEqual(['MD5']);
    expect(await offeredTo(configured, 'UDP', 'OldPhone/2.1')).toEqual(['MD5']);
  });

  it('refuses an answer with an algorithm this client was not offered', async () => {
    const refusals: string[] = [];
    const watched = new RequestAuthenticator({
      ...authOptions,
      onRefused: (reason) => refusals.push(reason),
    });
    const first = await watched.authenticate(invite(), flow('UDP'), 'call', 'alice123');
    const offer = (!first.ok ? first.response : null)!.wwwAuthenticate()[0]!;
    const sha256 = answerDigestChallenge(
      { realm: 'voxgate', nonce: offer.params.get('nonce')!, algorithm: 'SHA-256', qop: 'auth' },
      { username: 'alice123', password: 's3cret' },
      { method: 'INVITE', uri: 'sip:+15550100@127.0.0.1' },
    )!;
    const second = await watched.authenticate(invite(sha256), flow('UDP'), 'call', 'alice123');
    expect(second.ok).toBe(false);
    expect(refusals).toEqual(['algorithm not offered']);
    // The same answer over WebSocket, where SHA-256 is offered, is taken.
    const ws = await watched.authenticate(invite(sha256), flow('WS'), 'call', 'alice123');
    expect(ws.ok).toBe(true);
  });
});
