import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/core/clock.js';
import { DigestAuthenticator } from '../../../src/sip/auth/digest-authenticator.js';
import { digestHash } from '../../../src/sip/auth/digest.js';
import { parseAuthValues } from '../../../src/sip/message/auth-value.js';
import { endpointRows, freeLoopbackPort, runSipp, type SipTransport } from '../../support/sipp.js';

/**
 * The REGISTER scenarios in fixtures/sipp/ against voxgate's own DigestAuthenticator, before the
 * registrar exists: a few lines of message handling answer each REGISTER with its challenges
 * (SHA-256 first, then MD5, as RFC 8760 orders them) or its verdict. What these tests prove is
 * that the scenarios authenticate the way the registrar will ask them to.
 */

const ENDPOINTS = new Map([
  ['alice', 'alice-secret'],
  ['bob', 'b0b:p@ss"word'],
]);
const ALICE = { username: 'alice', password: 'alice-secret' };
const BOB = { username: 'bob', password: 'b0b:p@ss"word' };

interface Seen {
  method: string;
  cseq: string;
  authorization: string | null;
  answer: number;
  reason?: string;
}

interface DigestResponder {
  port: number;
  seen: Seen[];
  stop(): Promise<void>;
}

async function startDigestResponder(nonceLifetimeMs: number): Promise<DigestResponder> {
  const auth = new DigestAuthenticator({
    realm: 'voxgate',
    secret: randomBytes(32),
    clock: systemClock,
    nonceLifetimeMs,
  });
  const seen: Seen[] = [];
  const lookup = async (username: string) => {
    const password = ENDPOINTS.get(username);
    if (password === undefined) return null;
    return { ha1: (a: 'MD5' | 'SHA-256') => digestHash(a, `${username}:voxgate:${password}`) };
  };

  const answer = async (text: string): Promise<string | null> => {
    const [head] = text.split('\r\n\r\n');
    const lines = (head ?? '').split('\r\n');
    const [method = '', uri = ''] = (lines[0] ?? '').split(' ');
    if (method.startsWith('SIP/')) return null; // an echoed challenge never comes here
    const rows = (name: string) =>
      lines
        .filter((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`))
        .map((l) => l.slice(name.length + 1).trim());
    const echo = ['Via', 'From', 'To', 'Call-ID', 'CSeq'].flatMap((name) =>
      rows(name).map((value) => `${name}: ${name === 'To' ? `${value};tag=vg` : value}`),
    );
    const reply = (status: string, extra: string[]) =>
      [`SIP/2.0 ${status}`, ...echo, ...extra, 'Content-Length: 0', '', ''].join('\r\n');
    const authorization = rows('Authorization')[0] ?? null;
    const record = (answer: number, reason?: string) =>
      seen.push({ method, cseq: rows('CSeq')[0] ?? '', authorization, answer, reason });
    if (method !== 'REGISTER') {
      record(200);
      return reply('200 OK', []);
    }
    const challenge = (stale: boolean) =>
      auth.challenges(stale).map((c) => `WWW-Authenticate: ${c}`);
    if (!authorization) {
      record(401);
      return reply('401 Unauthorized', challenge(false));
    }
    const [credentials] = parseAuthValues([authorization], 'Authorization');
    const verdict = await auth.verify(credentials!.params, { method, uri }, lookup);
    if (!verdict.ok) {
      record(401, verdict.reason);
      return reply('401 Unauthorized', challenge(verdict.stale));
    }
    record(200);
    return reply(
      '200 OK',
      rows('Contact').map((c) => `Contact: ${c}`),
    );
  };

  const port = await freeLoopbackPort();
  const udp: Socket = createSocket('udp4');
  udp.on('message', (datagram, peer) => {
    void answer(datagram.toString()).then((out) => {
      if (out) udp.send(out, peer.port, peer.address);
    });
  });
  await new Promise<void>((resolve) => udp.bind(port, '127.0.0.1', resolve));
  const tcp: Server = createServer((socket) => {
    let buffered = '';
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk) => {
      buffered += chunk.toString();
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/^content-length:\s*(\d+)/im.exec(buffered.slice(0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const message = buffered.slice(0, end + 4 + length);
        buffered = buffered.slice(end + 4 + length);
        void answer(message).then((out) => out && socket.write(out));
      }
    });
  });
  await new Promise<void>((resolve) => tcp.listen(port, '127.0.0.1', resolve));
  return {
    port,
    seen,
    stop: async () => {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

describe('SIPp REGISTER scenarios against the digest authenticator', () => {
  let responder: DigestResponder;
  beforeAll(async () => {
    responder = await startDigestResponder(1000);
  });
  afterAll(async () => {
    await responder?.stop();
  });

  it.each<SipTransport>(['udp', 'tcp'])(
    'registers every endpoint over %s by answering the MD5 challenge offered after SHA-256, then unregisters',
    async (transport) => {
      const from = responder.seen.length;
      const result = await runSipp({
        scenario: 'register-digest.xml',
        target: { host: '127.0.0.1', port: responder.port },
        transport,
        injectCsv: endpointRows([ALICE, BOB]),
        variables: { unregister: 'yes' },
        calls: 2,
        rate: 10,
        timeoutMs: 20_000,
      });
      const seen = responder.seen.slice(from);
      expect(result.errors).toEqual([]);
      expect(result).toMatchObject({ outcome: 'all-succeeded', successful: 2, failed: 0 });
      expect(seen.map((s) => `${s.cseq} ${s.answer}`).sort()).toEqual([
        '1 REGISTER 401',
        '1 REGISTER 401',
        '2 REGISTER 200',
        '2 REGISTER 200',
        '3 REGISTER 200',
        '3 REGISTER 200',
      ]);
      const answered = seen.filter((s) => s.authorization);
      for (const s of answered) expect(s.authorization).toMatch(/algorithm=MD5/);
      expect(answered.map((s) => /nc=(\w+)/.exec(s.authorization!)?.[1])).toEqual(
        expect.arrayContaining(['00000001', '00000002']),
      );
    },
  );

  it('is challenged again after a wrong password, and then registers with the right one', async () => {
    const from = responder.seen.length;
    const result = await runSipp({
      scenario: 'register-wrong-password.xml',
      target: { host: '127.0.0.1', port: responder.port },
      injectCsv: endpointRows([ALICE]),
      calls: 1,
      timeoutMs: 20_000,
    });
    expect(result.errors).toEqual([]);
    expect(result).toMatchObject({ outcome: 'all-succeeded', successful: 1 });
    expect(responder.seen.slice(from).map((s) => [s.cseq, s.answer, s.reason])).toEqual([
      ['1 REGISTER', 401, undefined],
      ['2 REGISTER', 401, 'wrong response (bad password)'],
      ['3 REGISTER', 200, undefined],
    ]);
  });

  it('is told stale=true for an expired nonce with a right digest, and registers on the new one', async () => {
    const from = responder.seen.length;
    const result = await runSipp({
      scenario: 'register-stale-nonce.xml',
      target: { host: '127.0.0.1', port: responder.port },
      injectCsv: endpointRows([BOB]),
      variables: { nonce_wait_ms: '1500' },
      calls: 1,
      timeoutMs: 20_000,
    });
    expect(result.errors).toEqual([]);
    expect(result).toMatchObject({ outcome: 'all-succeeded', successful: 1 });
    expect(responder.seen.slice(from).map((s) => [s.cseq, s.answer, s.reason])).toEqual([
      ['1 REGISTER', 401, undefined],
      ['2 REGISTER', 401, 'nonce expired'],
      ['3 REGISTER', 200, undefined],
    ]);
  });

  it('gets 200 to OPTIONS', async () => {
    const result = await runSipp({
      scenario: 'options.xml',
      target: { host: '127.0.0.1', port: responder.port },
      calls: 3,
      timeoutMs: 10_000,
    });
    expect(result).toMatchObject({ outcome: 'all-succeeded', successful: 3 });
  });
});
