import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  type SipMessage,
  SipParseError,
  SipRequest,
  SipStreamFramer,
  parseMessage,
  validateRequest,
  validateResponse,
} from '../../../../src/sip/message/index.js';
import { TYPICAL } from './typical-messages.js';

/**
 * Mutated messages (byte flips, truncations, duplications, splices, inserted rows) built from
 * the RFC 4475 set and typical traffic, through the parser, every typed accessor, validation,
 * serialisation and the stream framer. The only exception allowed is SipParseError. The
 * generator is seeded, so a failure reproduces: the message is in the failure report.
 */
const ITERATIONS = 100_000;
const SEED = 0x5eed4475;

const FIXTURES = fileURLToPath(new URL('../../../../fixtures/sip/rfc4475/', import.meta.url));
const CORPUS: Buffer[] = [
  ...readdirSync(FIXTURES)
    .filter((name) => name.endsWith('.dat'))
    .sort()
    .map((name) => readFileSync(FIXTURES + name)),
  ...Object.values(TYPICAL),
];

/** Octets that matter to the grammar, so mutations reach the parsers' edges. */
const INTERESTING = Buffer.from('\r\n \t:;,"<>\\%@[]=/?&*0129azAZ\x00\x7f\x80\xff.-_~\'');

const ROWS = [
  'Via: SIP/2.0/UDP [2001:db8::1]:5060;branch=z9hG4bK1;rport;received=2001:db8::2',
  'Contact: *',
  'Contact: "x" <sip:a@b;lr>;expires=0, <sips:c@[::1]:5061?Subject=x&Route=%3Csip:y%3E>',
  'Content-Length: 99999999999',
  'Max-Forwards: 256',
  'CSeq: 4294967296 INVITE',
  'WWW-Authenticate: Digest realm="a\\"b", nonce="x", qop="auth,auth-int"',
  'Proxy-Authorization: Bearer abc.def.ghi==',
  'Route: <sip:a@b>, <tel:+1234>',
  'Date: Sat, 15 Oct 2005 04:44:56 GMT',
  'Content-Type: text/plain;charset="utf-8"',
  'Require: 100rel, timer',
  ' folded continuation',
  'X-Weird: "unterminated',
];

/** mulberry32: small, fast and seedable. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mutate(random: () => number): Buffer {
  const pick = (n: number): number => Math.floor(random() * n);
  let data = Buffer.from(CORPUS[pick(CORPUS.length)]!);
  const rounds = 1 + pick(4);
  for (let r = 0; r < rounds && data.length > 0; r++) {
    const at = pick(data.length);
    switch (pick(7)) {
      case 0: // flip to an interesting octet
        data[at] = INTERESTING[pick(INTERESTING.length)]!;
        break;
      case 1: // flip to any octet
        data[at] = pick(256);
        break;
      case 2: // truncate
        data = data.subarray(0, at);
        break;
      case 3: {
        // duplicate a slice in place
        const end = Math.min(data.length, at + 1 + pick(64));
        data = Buffer.concat([data.subarray(0, end), data.subarray(at, end), data.subarray(end)]);
        break;
      }
      case 4: {
        // splice the tail of another message
        const other = CORPUS[pick(CORPUS.length)]!;
        data = Buffer.concat([data.subarray(0, at), other.subarray(pick(other.length))]);
        break;
      }
      case 5: {
        // insert a row after a line end
        const lineEnd = data.indexOf('\r\n', at);
        if (lineEnd === -1) break;
        const row = Buffer.from(`\r\n${ROWS[pick(ROWS.length)]}`, 'latin1');
        data = Buffer.concat([data.subarray(0, lineEnd), row, data.subarray(lineEnd)]);
        break;
      }
      default: // delete a range
        data = Buffer.concat([data.subarray(0, at), data.subarray(at + 1 + pick(16))]);
    }
  }
  return data;
}

/** Calls f; a SipParseError is a fine outcome, anything else fails the test. */
function tolerate(f: () => unknown): void {
  try {
    f();
  } catch (error) {
    if (!(error instanceof SipParseError)) throw error;
  }
}

function exercise(message: SipMessage): void {
  const accessors: (() => unknown)[] = [
    () => message.via(),
    () => message.from(),
    () => message.to(),
    () => message.callId(),
    () => message.cseq(),
    () => message.contact(),
    () => message.route(),
    () => message.recordRoute(),
    () => message.maxForwards(),
    () => message.expires(),
    () => message.contentLength(),
    () => message.contentType(),
    () => message.date(),
    () => message.authorization(),
    () => message.proxyAuthorization(),
    () => message.wwwAuthenticate(),
    () => message.proxyAuthenticate(),
    () => message.requires(),
    () => message.proxyRequire(),
    () => message.supported(),
    () => message.unsupported(),
  ];
  for (const accessor of accessors) tolerate(accessor);
  if (message instanceof SipRequest) {
    tolerate(() => message.requestUri());
    tolerate(() => validateRequest(message));
  } else {
    tolerate(() => validateResponse(message as Parameters<typeof validateResponse>[0]));
  }
  for (const name of ['Via', 'Contact', 'Date', 'X-Weird', 'WWW-Authenticate']) {
    message.headers.getAll(name);
  }
  // What parsed can always be written, and what is written parses again.
  parseMessage(message.toBuffer(), { streamed: true });
}

function run(data: Buffer, streamed: boolean): void {
  let message: SipMessage;
  try {
    message = parseMessage(data, { streamed, maxSize: 4096 });
  } catch (error) {
    if (error instanceof SipParseError) return;
    throw error;
  }
  exercise(message);
}

function frame(framer: SipStreamFramer, data: Buffer, random: () => number): void {
  let at = 0;
  while (at < data.length) {
    const size = 1 + Math.floor(random() * 600);
    for (const item of framer.push(data.subarray(at, at + size))) {
      if (item.kind === 'message') tolerate(() => parseMessage(item.data, { streamed: true }));
    }
    expect(framer.buffered).toBeLessThanOrEqual(4096);
    at += size;
  }
}

describe('SIP message fuzzing', () => {
  it(`survives ${ITERATIONS} mutated messages with nothing but SipParseError`, () => {
    const random = prng(SEED);
    let framer = new SipStreamFramer({ maxSize: 4096 });
    let parsed = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const data = mutate(random);
      try {
        run(data, random() < 0.3);
        if (i % 10 === 0) frame(framer, data, random);
        if (i % 500 === 0) framer = new SipStreamFramer({ maxSize: 4096 });
      } catch (error) {
        throw new Error(
          `iteration ${i}: ${String(error)}\n${JSON.stringify(data.toString('latin1'))}`,
          { cause: error },
        );
      }
      parsed++;
    }
    expect(parsed).toBe(ITERATIONS);
  });
});
