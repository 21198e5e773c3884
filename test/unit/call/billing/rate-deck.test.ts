import { describe, expect, it } from 'vitest';
import { destinationKey, RateDeck, RateDeckError } from '../../../../src/call/billing/rate-deck.js';
import { DEFAULT_RATE_DECK } from '../../../../src/config/config.js';

const CSV = [
  'prefix,rate_per_minute,description',
  '1,0.00850,United States and Canada',
  '1800,0.00600,Toll-free',
  '44,0.01200,United Kingdom',
  '447,0.03500,"United Kingdom, mobile"',
  'sip,0.00300,SIP URI destinations',
  '',
].join('\n');

describe('RateDeck', () => {
  const deck = RateDeck.parse(CSV);

  it('gives a destination the rate of the longest prefix it starts with', () => {
    expect(deck.rateFor('14155550100')?.ratePerMinute).toBe('0.00850');
    expect(deck.rateFor('+18005550100')?.ratePerMinute).toBe('0.00600');
    expect(deck.rateFor('442071838750')?.ratePerMinute).toBe('0.01200');
    expect(deck.rateFor('+44 7911 123456')).toEqual({
      prefix: '447',
      ratePerMinute: '0.03500',
      description: 'United Kingdom, mobile',
    });
    expect(deck.rateFor('4')).toBeNull();
    expect(deck.rateFor('919876543210')).toBeNull();
  });

  it('rates SIP URIs by the sip row alone', () => {
    expect(deck.rateFor('sip:alice@example.com')?.ratePerMinute).toBe('0.00300');
    expect(deck.rateFor('SIPS:+14155550100@carrier.example.com')?.prefix).toBe('sip');
    expect(RateDeck.parse('prefix,rate_per_minute,description\n1,0.01,US').rateFor('sip:a@b')).toBe(
      null,
    );
  });

  it('reads the bundled deck', () => {
    const bundled = RateDeck.load(DEFAULT_RATE_DECK);
    expect(bundled.size).toBeGreaterThanOrEqual(7);
    expect(bundled.rateFor('18005550100')?.description).toMatch(/toll-free/);
    expect(bundled.rateFor('447400123456')?.description).toMatch(/mobile/);
    expect(bundled.rateFor('919876543210')?.prefix).toBe('91');
    expect(bundled.rateFor('4930123456')?.prefix).toBe('49');
    expect(bundled.rateFor('sip:bob@example.com')?.prefix).toBe('sip');
  });

  it.each([
    [
      'prefix,rate\n1,0.01',
      'rate deck deck.csv, line 1: the header must be prefix,rate_per_minute,description',
    ],
    [
      'prefix,rate_per_minute,description\n1,0.01,US\n+44,0.01,UK',
      'rate deck deck.csv, line 3: prefix must be 1 to 15 digits or sip, got "+44"',
    ],
    [
      'prefix,rate_per_minute,description\n1,-0.01,US',
      'rate deck deck.csv, line 2: rate_per_minute must be a decimal number such as 0.00850, got "-0.01"',
    ],
    [
      'prefix,rate_per_minute,description\n1,0.01,US\n1,0.02,US again',
      'rate deck deck.csv, line 3: prefix 1 is listed twice',
    ],
  ])('refuses %j naming the line', (csv, message) => {
    expect(() => RateDeck.parse(csv, 'deck.csv')).toThrow(RateDeckError);
    expect(() => RateDeck.parse(csv, 'deck.csv')).toThrow(message);
  });
});

describe('destinationKey', () => {
  it('keeps the digits of a number and calls any SIP URI sip', () => {
    expect(destinationKey('+1 (415) 555-0100')).toBe('14155550100');
    expect(destinationKey('sip:bob@example.com')).toBe('sip');
    expect(destinationKey('bob@example.com')).toBe('sip');
  });
});
