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
import { mutate, prng } from './mutations.js';

/**
 * Mutated messages (byte flips, truncations, duplications, splices, inserted rows) built from
 * the RFC 4475 set and typical traffic, through the parser, every typed accessor, validation,
 * serialisation and the stream framer. The only exception allowed is SipParseError. The
 * generator is seeded, so a failure reproduces: the message is in the failure report.
 */
const ITERATIONS = 100_000;
const SEED = 0x5eed4475;

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
