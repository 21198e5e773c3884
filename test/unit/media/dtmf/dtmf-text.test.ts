import { describe, expect, it } from 'vitest';
import {
  DtmfParseError,
  parseDigitString,
  parseSipInfoDtmf,
} from '../../../../src/media/dtmf/index.js';

describe('digit strings with waits', () => {
  it('schedules digits, w (0.5 s) and W (1 s)', () => {
    expect(parseDigitString('12w#W*', { toneMs: 100, gapMs: 50 })).toEqual({
      digits: [
        { digit: '1', atMs: 0, durationMs: 100 },
        { digit: '2', atMs: 150, durationMs: 100 },
        { digit: '#', atMs: 800, durationMs: 100 },
        { digit: '*', atMs: 1950, durationMs: 100 },
      ],
      totalMs: 2100,
    });
    expect(
      parseDigitString('ABCD0')
        .digits.map((d) => d.digit)
        .join(''),
    ).toBe('ABCD0');
    expect(parseDigitString('wW')).toEqual({ digits: [], totalMs: 1500 });
    expect(parseDigitString('1'.repeat(1000)).digits).toHaveLength(1000);
  });

  it.each([
    ['', 'digit string is empty'],
    ['12x', 'invalid character "x" at position 3 of digit string "12x"'],
    ['1a', 'invalid character "a" at position 2'],
    ['1 2', 'invalid character " " at position 2'],
    ['E', 'invalid character "E" at position 1'],
    ['1'.repeat(1001), 'digit string is 1001 characters, over the limit of 1000'],
  ])('refuses %j', (text, message) => {
    expect(() => parseDigitString(text)).toThrow(DtmfParseError);
    expect(() => parseDigitString(text)).toThrow(message);
  });
});

describe('SIP INFO DTMF bodies', () => {
  it('reads application/dtmf-relay', () => {
    expect(parseSipInfoDtmf('application/dtmf-relay', 'Signal=5\r\nDuration=160\r\n')).toEqual({
      digit: '5',
      durationMs: 160,
    });
    expect(parseSipInfoDtmf('Application/DTMF-Relay', 'signal = #\nduration= 250')).toEqual({
      digit: '#',
      durationMs: 250,
    });
    expect(parseSipInfoDtmf('application/dtmf-relay', 'Signal=10\r\n')).toEqual({
      digit: '*',
      durationMs: null,
    });
    expect(parseSipInfoDtmf('application/dtmf-relay', 'Signal=b\r\nDuration=100')).toMatchObject({
      digit: 'B',
    });
  });

  it('reads application/dtmf', () => {
    expect(parseSipInfoDtmf('application/dtmf', '7\r\n')).toEqual({ digit: '7', durationMs: null });
    expect(parseSipInfoDtmf('application/dtmf; charset=utf-8', '*')).toMatchObject({ digit: '*' });
  });

  it.each([
    ['application/dtmf-relay', 'Duration=160', 'dtmf-relay body has no Signal= line'],
    [
      'application/dtmf-relay',
      'Signal=X\r\nDuration=160',
      'dtmf-relay Signal "X" is not a DTMF digit',
    ],
    [
      'application/dtmf-relay',
      'Signal=5\r\nDuration=abc',
      'dtmf-relay Duration "abc" is not a positive',
    ],
    [
      'application/dtmf-relay',
      'Signal=5\r\nDuration=0',
      'dtmf-relay Duration "0" is not a positive',
    ],
    ['application/dtmf-relay', 'Signal 5', 'dtmf-relay line "Signal 5" has no "="'],
    ['application/dtmf', '', 'application/dtmf body is empty'],
    ['application/dtmf', '12', 'application/dtmf body "12" is not a DTMF digit'],
    ['application/sdp', 'v=0', 'content type "application/sdp" carries no DTMF'],
  ])('refuses %s %j', (type, body, message) => {
    expect(() => parseSipInfoDtmf(type, body)).toThrow(DtmfParseError);
    expect(() => parseSipInfoDtmf(type, body)).toThrow(message);
  });
});
