import { describe, expect, it } from 'vitest';
import {
  type SipMessage,
  SipParseError,
  SipRequest,
  parseMessage,
  parseNameAddr,
  parseUri,
  parseViaList,
} from '../../../../src/sip/message/index.js';
import { INVITE } from './typical-messages.js';

/**
 * The parser reads header names and values in the message's octets, finds the end of the head
 * while splitting the rows, and cuts a value out of the text only when it is asked for. These
 * check that none of that shows: long heads, edited headers and text from the application
 * read as they always did.
 */

/** The INVITE with a row added after the start line. */
function withRow(row: string): Buffer {
  const text = INVITE.toString('latin1');
  const lineEnd = text.indexOf('\r\n');
  return Buffer.from(`${text.slice(0, lineEnd)}\r\n${row}${text.slice(lineEnd)}`, 'latin1');
}

function typedFields(message: SipMessage): unknown[] {
  const request = message as SipRequest;
  return [
    request.requestUri(),
    message.topVia(),
    message.via(),
    message.from(),
    message.to(),
    message.callId(),
    message.cseq(),
    message.contact(),
    message.maxForwards(),
    message.contentType(),
    message.body.toString('latin1'),
  ];
}

describe('reading in the octets', () => {
  const expected = typedFields(parseMessage(INVITE));

  it('reads a head longer than the octets it first reads as text the same way', () => {
    for (const size of [4000, 4080, 4090, 4096, 5000, 20000]) {
      const message = parseMessage(withRow(`X-Pad: ${'a'.repeat(size)}`));
      expect(typedFields(message)).toEqual(expected);
      expect(message.headers.get('X-Pad')).toHaveLength(size);
    }
  });

  it('finds the end of a head that ends across the first 4096 octets', () => {
    const short = withRow('X-Pad: a');
    const headEnd = short.indexOf('\r\n\r\n');
    for (let shift = -6; shift <= 6; shift++) {
      const pad = 'a'.repeat(4096 - headEnd + shift);
      const message = parseMessage(withRow(`X-Pad: a${pad}`));
      expect(typedFields(message)).toEqual(expected);
    }
  });

  it('reads headers edited after parsing as edited, and the others as they came', () => {
    const message = parseMessage(INVITE);
    const before = message.from();
    message.headers.set('Via', 'SIP/2.0/TCP edited.example.com;branch=z9hG4bKnew');
    message.headers.append('X-Added', 'yes');
    expect(message.topVia()).toMatchObject({ transport: 'TCP', branch: 'z9hG4bKnew' });
    expect(message.from()).toEqual(before);
    expect(message.headers.get('x-added')).toBe('yes');
    expect(message.headers.remove('Contact')).toBe(true);
    expect(message.contact()).toEqual([]);
    const again = parseMessage(message.toBuffer());
    expect([...again.headers]).toEqual([...message.headers]);
    expect(again.from()).toEqual(before);
  });

  it('reads unfolded values through the typed accessors', () => {
    const folded = withRow('Subject: one\r\n two');
    const message = parseMessage(
      Buffer.from(
        folded
          .toString('latin1')
          .replace(/\r\nTo: /, '\r\nTo:\r\n  ')
          .replace(/\r\nCSeq: /, '\r\nCSeq:\r\n\t'),
        'latin1',
      ),
    );
    expect(message.headers.get('Subject')).toBe('one two');
    expect(message.to()).toEqual(expected[4]);
    expect(message.cseq()).toEqual(expected[6]);
  });

  it('reads text the application gives, beyond latin1 included, as before', () => {
    const address = parseNameAddr('"\u65e5\u672c \u0174" <sip:a@b>;tag=x', 'From');
    expect(address).toMatchObject({ displayName: '\u65e5\u672c \u0174', tag: 'x' });
    expect(() => parseUri('sip:a@b;x=\u0174')).toThrow(SipParseError);
    expect(() => parseUri('sip:a\u0125@b')).toThrow(SipParseError);
    expect(() => parseViaList(['SIP/2.0/UDP h;branch=z9\u0125'])).toThrow(SipParseError);
  });

  it('reads names in their usual spellings, in other cases and in compact form alike', () => {
    const message = parseMessage(
      withRow(
        'v: SIP/2.0/UDP first.example.com;branch=z9hG4bKtop\r\nCALL-id: x\r\nMax-forwards: 9',
      ),
    );
    expect(message.topVia().host).toBe('first.example.com');
    expect(message.headers.getRows('Call-ID')).toEqual(['x', expected[5]]);
    expect(() => message.callId()).toThrow('Multiple Call-ID headers');
    expect(message.headers.count('max-forwards')).toBe(2);
  });
});
