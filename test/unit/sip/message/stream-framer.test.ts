import { describe, expect, it } from 'vitest';
import {
  type FramedItem,
  SipStreamFramer,
  parseMessage,
} from '../../../../src/sip/message/index.js';
import { TYPICAL } from './typical-messages.js';

const kinds = (items: FramedItem[]): string[] => items.map((item) => item.kind);
const messages = (items: FramedItem[]): Buffer[] =>
  items.flatMap((item) => (item.kind === 'message' ? [item.data] : []));

describe('SipStreamFramer', () => {
  it('cuts merged messages by Content-Length (RFC 3261 18.3)', () => {
    const stream = Buffer.concat([TYPICAL.INVITE, TYPICAL.REGISTER, TYPICAL.OK_200]);
    const items = new SipStreamFramer().push(stream);
    expect(messages(items)).toEqual([TYPICAL.INVITE, TYPICAL.REGISTER, TYPICAL.OK_200]);
  });

  it('gathers a message split at every octet', () => {
    const framer = new SipStreamFramer();
    const out: Buffer[] = [];
    for (let i = 0; i < TYPICAL.INVITE.length; i++) {
      out.push(...messages(framer.push(TYPICAL.INVITE.subarray(i, i + 1))));
      if (i < TYPICAL.INVITE.length - 1) expect(out).toHaveLength(0);
    }
    expect(out).toEqual([TYPICAL.INVITE]);
    expect(framer.buffered).toBe(0);
    expect(parseMessage(out[0]!, { streamed: true }).callId()).toBe(
      'a84b4c76e66710@pc33.atlanta.example.com',
    );
  });

  it('gathers messages over chunks of every size', () => {
    const stream = Buffer.concat([TYPICAL.OK_200, TYPICAL.ACK, TYPICAL.INVITE]);
    for (const size of [2, 3, 7, 64, 333, 1000]) {
      const framer = new SipStreamFramer();
      const out: Buffer[] = [];
      for (let i = 0; i < stream.length; i += size) {
        out.push(...messages(framer.push(stream.subarray(i, i + size))));
      }
      expect(out).toEqual([TYPICAL.OK_200, TYPICAL.ACK, TYPICAL.INVITE]);
    }
  });

  it('tells double-CRLF pings and single-CRLF pongs apart (RFC 5626 3.5.1)', () => {
    const framer = new SipStreamFramer();
    expect(kinds(framer.push(Buffer.from('\r\n\r\n')))).toEqual(['ping']);
    expect(kinds(framer.push(Buffer.from('\r\n\r\n\r\n\r\n')))).toEqual(['ping', 'ping']);
    expect(kinds(framer.push(Buffer.concat([Buffer.from('\r\n'), TYPICAL.ACK])))).toEqual([
      'pong',
      'message',
    ]);
    expect(kinds(framer.push(Buffer.concat([TYPICAL.ACK, Buffer.from('\r\n\r\n')])))).toEqual([
      'message',
      'ping',
    ]);
  });

  it('answers a pong at once, and a ping split over chunks still counts as a ping', () => {
    const framer = new SipStreamFramer();
    expect(kinds(framer.push(Buffer.from('\r\n')))).toEqual(['pong']);
    expect(kinds(framer.push(Buffer.from('\r\n')))).toEqual(['ping']);
    expect(kinds(framer.push(Buffer.from('\r\n\r')))).toEqual(['pong']);
    expect(framer.buffered).toBe(1);
    expect(kinds(framer.push(Buffer.from('\n')))).toEqual(['ping']);
    expect(framer.buffered).toBe(0);
  });

  it('refuses a stream without Content-Length, or with a bad one, and then stays closed', () => {
    for (const head of ['', 'Content-Length: -1\r\n', 'Content-Length: 1\r\nl: 2\r\n']) {
      const framer = new SipStreamFramer();
      const items = framer.push(Buffer.from(`OPTIONS sip:a@b SIP/2.0\r\n${head}\r\n`));
      expect(kinds(items)).toEqual(['error']);
      expect(framer.push(TYPICAL.ACK)).toEqual([]);
      expect(framer.buffered).toBe(0);
    }
  });

  it('refuses a message over the maximum size without holding more than that', () => {
    const framer = new SipStreamFramer({ maxSize: 1024 });
    const endless = Buffer.from(`OPTIONS sip:a@b SIP/2.0\r\nX: ${'y'.repeat(300)}\r\n`);
    let items: FramedItem[] = [];
    for (let i = 0; i < 10 && items.length === 0; i++) {
      items = framer.push(endless);
      expect(framer.buffered).toBeLessThanOrEqual(1024);
    }
    expect(items).toMatchObject([{ kind: 'error', error: { kind: 'too-large' } }]);

    const bigBody = new SipStreamFramer({ maxSize: 1024 });
    const declared = bigBody.push(Buffer.from('MESSAGE sip:a@b SIP/2.0\r\nl: 2000\r\n\r\nx'));
    expect(declared).toMatchObject([{ kind: 'error', error: { reason: 'Message too large' } }]);
  });

  it('hands over messages that frame but do not parse, for the caller to answer', () => {
    const bad = Buffer.from('INVITE <sip:a@b> SIP/2.0\r\nContent-Length: 0\r\n\r\n');
    const items = new SipStreamFramer().push(Buffer.concat([bad, TYPICAL.ACK]));
    expect(messages(items)).toEqual([bad, TYPICAL.ACK]);
    expect(() => parseMessage(bad, { streamed: true })).toThrow('Malformed Request-URI');
  });
});
