import { describe, expect, it } from 'vitest';
import {
  CarrierRegistration,
  REGISTER_RETRY_MAX_MS,
} from '../../../../src/call/carriers/carrier-registration.js';
import type { SipCarrier } from '../../../../src/call/carriers/sip-carrier.js';
import type { SipDns } from '../../../../src/sip/dialog/server-locator.js';
import { parseMessage, type SipRequest } from '../../../../src/sip/message/index.js';
import { loopbackStack } from '../../../support/sip-loopback.js';

/**
 * One carrier's registration on the real SIP stack over an in-memory transport and a manual
 * clock: the registrar's answers are injected, what voxgate sends is read back.
 */
const REGISTRAR = { address: '198.51.100.7', port: 5062 };

const carrier = (auth = true): SipCarrier => ({
  name: 'acme',
  gateways: [
    { host: REGISTRAR.address, port: REGISTRAR.port, transport: null, priority: 0, weight: 1 },
  ],
  auth: auth ? { username: 'acct', password: 'Pass-word9', realm: null } : null,
  prefixes: [''],
  priority: 0,
  weight: 1,
  format: { e164Plus: null, techPrefix: '', fromUser: null, fromDomain: null },
  codecs: null,
  // Without auth the file requires register.user (carriers-file.ts).
  register: { expires: 600, user: auth ? null : 'acct', domain: 'reg.example' },
  secure: false,
});

const noDns: SipDns = {
  naptr: () => Promise.reject(new Error('no DNS in this test')),
  srv: () => Promise.reject(new Error('no DNS in this test')),
  address: () => Promise.reject(new Error('no DNS in this test')),
} as unknown as SipDns;

function setup(withAuth = true) {
  const loop = loopbackStack();
  const logs: { level: 'info' | 'warn'; fields: Record<string, unknown>; message: string }[] = [];
  const registration = new CarrierRegistration(carrier(withAuth), {
    transactions: loop.stack.transactions,
    transport: loop.stack.transport,
    dns: noDns,
    scheduler: loop.scheduler,
    answerWaitMs: 4000,
    log: {
      info: (fields, message) => logs.push({ level: 'info', fields: { ...fields }, message }),
      warn: (fields, message) => logs.push({ level: 'warn', fields: { ...fields }, message }),
    },
  });
  /** Every REGISTER sent so far (retransmissions left out). */
  const registers = () => {
    const seen = new Set<string>();
    return loop.sent
      .map((s) => parseMessage(s.data) as SipRequest)
      .filter((m) => {
        const key = m.headers.get('Via')!;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
  };
  const last = () => registers().at(-1)!;
  /** The registrar answers the last REGISTER. */
  const answer = async (status: string, ...headers: string[]) => {
    const request = last();
    const copy = (name: string) => `${name}: ${request.headers.get(name)}`;
    const text = [
      `SIP/2.0 ${status}`,
      copy('Via'),
      copy('From'),
      `${copy('To')};tag=reg1`,
      copy('Call-ID'),
      copy('CSeq'),
      ...headers,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    loop.inject(Buffer.from(text), REGISTRAR);
    await flush();
  };
  const advance = async (ms: number) => {
    loop.scheduler.advance(ms);
    await flush();
  };
  return { loop, registration, registers, last, answer, advance, logs };
}

const flush = async () => {
  for (let k = 0; k < 10; k++) await new Promise((r) => setImmediate(r));
};

const challenge = (nonce: string, stale = false) =>
  `WWW-Authenticate: Digest realm="reg.example", nonce="${nonce}", algorithm=MD5${stale ? ', stale=true' : ''}`;

describe('CarrierRegistration', () => {
  it('registers the AOR at the domain, with one Call-ID and a CSeq rising by one', async () => {
    const { registration, registers, answer, advance } = setup();
    registration.start();
    await advance(0);
    await answer('401 Unauthorized', challenge('n1'));
    await answer('200 OK', 'Contact: <sip:acct@192.0.2.1:5060>;expires=120');
    expect(registration.registered).toBe(true);
    await advance(60_000); // the refresh, at half of the 120 s granted
    await answer('401 Unauthorized', challenge('n2'));
    await answer('200 OK', 'Expires: 100'); // no Contact: the Expires header grants
    const sent = registers();
    expect(sent.map((r) => r.uri)).toEqual(Array(4).fill('sip:reg.example'));
    expect(sent.map((r) => r.headers.get('To'))).toEqual(Array(4).fill('<sip:acct@reg.example>'));
    expect(new Set(sent.map((r) => r.callId())).size).toBe(1);
    expect(sent.map((r) => r.cseq().seq)).toEqual([1, 2, 3, 4]);
    expect(sent.map((r) => r.headers.get('Contact'))).toEqual(
      Array(4).fill('<sip:acct@192.0.2.1:5060>'),
    );
    await advance(49_000);
    expect(registers()).toHaveLength(4);
    await advance(1000); // half of 100 s
    expect(registers()).toHaveLength(5);
  });

  it('raises the time asked to Min-Expires on 423 and asks once more', async () => {
    const { registration, last, answer, advance } = setup();
    registration.start();
    await advance(0);
    await answer('423 Interval Too Brief', 'Min-Expires: 1800');
    expect(last().headers.get('Expires')).toBe('1800');
    await answer('200 OK', 'Expires: 1800');
    expect(registration.registered).toBe(true);
  });

  it('answers a stale nonce once more, and takes a second challenge as refused credentials', async () => {
    const { registration, registers, answer, advance, logs } = setup();
    registration.start();
    await advance(0);
    await answer('401 Unauthorized', challenge('n1'));
    await answer('401 Unauthorized', challenge('n2', true));
    expect(registers()).toHaveLength(3);
    await answer('401 Unauthorized', challenge('n3'));
    expect(registers()).toHaveLength(3);
    expect(registration.registered).toBe(false);
    const warned = logs.filter((l) => l.level === 'warn');
    expect(warned).toHaveLength(1);
    expect(warned[0]!.message).toContain('refused our credentials (401)');
    expect(warned[0]!.fields).toMatchObject({ carrier: 'acme', status: 401, retryInS: 2 });
    expect(JSON.stringify(logs)).not.toContain('Pass-word9');
  });

  it('backs off 2, 4, 8 s... up to the cap, and honours Retry-After', async () => {
    const { registration, registers, answer, advance, logs } = setup();
    registration.start();
    await advance(0);
    const delays: number[] = [];
    for (let k = 0; k < 10; k++) {
      await answer('403 Forbidden');
      delays.push(logs.at(-1)!.fields.retryInS as number);
      await advance(delays.at(-1)! * 1000);
    }
    expect(delays).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
    expect(REGISTER_RETRY_MAX_MS).toBe(300_000);
    const before = registers().length;
    await answer('503 Service Unavailable', 'Retry-After: 30');
    await advance(29_000);
    expect(registers()).toHaveLength(before);
    await advance(1000);
    expect(registers()).toHaveLength(before + 1);
  });

  it('keeps a binding through an unanswered refresh until it expires', async () => {
    const { registration, answer, advance } = setup();
    registration.start();
    await advance(0);
    await answer('200 OK', 'Expires: 60');
    await advance(30_000); // the refresh goes out; nobody answers within 4 s
    await advance(4000);
    expect(registration.registered).toBe(true);
    await advance(26_000);
    expect(registration.registered).toBe(false);
  });

  it('names a registrar challenge the carrier has no credentials for, without answering it', async () => {
    const { registration, registers, answer, advance, logs } = setup(false);
    registration.start();
    await advance(0);
    await answer('401 Unauthorized', challenge('n1'));
    expect(registers()).toHaveLength(1);
    expect(logs.at(-1)!.message).toContain(
      'the registrar asks for credentials (401) and the carrier has none',
    );
  });

  it('removes the binding with Expires 0 when stopped, and sends nothing when not registered', async () => {
    const { registration, registers, last, answer, advance, logs } = setup();
    registration.start();
    await advance(0);
    await answer('200 OK', 'Expires: 600');
    const stopped = registration.stop();
    await flush();
    expect(last().headers.get('Expires')).toBe('0');
    await answer('200 OK');
    await stopped;
    expect(logs.at(-1)!.message).toBe('carrier acme unregistered');
    expect(registration.registered).toBe(false);
    const count = registers().length;
    await registration.stop();
    await advance(600_000);
    expect(registers()).toHaveLength(count);
  });
});
