import { describe, expect, it } from 'vitest';
import {
  SipParseError,
  claimsSip,
  parseMessage,
  type SipResponse,
} from '../../../../src/sip/message/index.js';
import type { Flow } from '../../../../src/sip/transport/flow.js';
import { rejectUnparsable } from '../../../../src/sip/transport/unparsable-request.js';

const udp: Flow = {
  protocol: 'UDP',
  local: { address: '127.0.0.1', port: 5060 },
  remote: { address: '192.0.2.7', port: 5070 },
};
const tcp: Flow = { ...udp, protocol: 'TCP', connectionId: 'c1' };

function failure(text: string): SipParseError {
  try {
    parseMessage(Buffer.from(text.replace(/\n/g, '\r\n'), 'latin1'));
  } catch (error) {
    if (error instanceof SipParseError) return error;
    throw error;
  }
  throw new Error('parsed');
}

/** Compact header names (RFC 3261 7.3.3) and a Content-Length beyond the body. */
const COMPACT = failure(
  [
    'OPTIONS sip:a@example.com SIP/2.0',
    'v: SIP/2.0/UDP 192.0.2.7:5070;branch=z9hG4bKc1',
    'f: <sip:x@example.com>;tag=1',
    't: <sip:a@example.com>',
    'i: compact-1',
    'CSeq: 1 OPTIONS',
    'l: 99',
    '',
    '',
  ].join('\n'),
);

const reasonOf = (data: Buffer) => (parseMessage(data) as SipResponse).reason;

describe('rejectUnparsable over UDP: never larger than the request', () => {
  it('gives the fault as the reason when that fits', () => {
    const answer = rejectUnparsable(COMPACT, udp, undefined, 10_000)!;
    expect(reasonOf(answer.data)).toBe('Content-Length exceeds body');
  });

  it("falls back to the status's own reason, then to nothing", () => {
    const full = rejectUnparsable(COMPACT, udp, undefined, 10_000)!.data.length;
    const short = rejectUnparsable(COMPACT, udp, undefined, full - 1)!;
    expect(reasonOf(short.data)).toBe('Bad Request');
    expect(short.data.length).toBe(
      full - 'Content-Length exceeds body'.length + 'Bad Request'.length,
    );
    expect(rejectUnparsable(COMPACT, udp, undefined, short.data.length)).not.toBeNull();
    expect(rejectUnparsable(COMPACT, udp, undefined, short.data.length - 1)).toBeNull();
  });

  it('leaves answers on a connection alone (no source to forge)', () => {
    const answer = rejectUnparsable(COMPACT, tcp, undefined, 1)!;
    expect(reasonOf(answer.data)).toBe('Content-Length exceeds body');
  });
});

describe('claimsSip', () => {
  it.each([
    ['a malformed Request-URI', 'INVITE sip:a@b; lr SIP/2.0\nVia: x\n\n', true],
    ['an unknown SIP version', 'INVITE sip:a@b SIP/7.0\nVia: x\n\n', true],
    ['a Status-Line', 'SIP/2.0 2000 OK\nVia: x\n\n', true],
    ['a start line alone', 'INVITE sip:a@b; lr SIP/2.0\n\n', false],
    ['no SIP-Version', 'INVITE sip:a@b\nVia: x\n\n', false],
    ['HTTP', 'GET / HTTP/1.1\nHost: a\n\n', false],
    ['a path that holds SIP/2', 'GET /SIP/2 HTTP/1.1\nHost: a\n\n', false],
    ['one byte', 'A', false],
  ])('%s: %s', (_name, text, expected) => {
    expect(claimsSip(failure(text))).toBe(expected);
  });
});
