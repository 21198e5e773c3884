import { describe, expect, it } from 'vitest';
import { MessageRateDeck } from '../../../src/messaging/message-rate-deck.js';

const HEADER = 'prefix,rate_per_unit,carrier_fee_per_unit,description';

describe('MessageRateDeck', () => {
  it('gives a destination the row of the longest prefix it starts with, or none', () => {
    const deck = MessageRateDeck.parse(
      [
        HEADER,
        '1,0.00500,0.00300,US',
        '1800,0.00900,0.00400,US toll-free',
        '',
        '44,0.035,0,UK',
      ].join('\n'),
    );
    expect(deck.rateFor('18005550100')).toMatchObject({ prefix: '1800', ratePerUnit: '0.00900' });
    expect(deck.rateFor('14155550100')).toMatchObject({
      prefix: '1',
      carrierFeePerUnit: '0.00300',
      description: 'US',
    });
    expect(deck.rateFor('447700900123')).toMatchObject({ prefix: '44', ratePerUnit: '0.035' });
    expect(deck.rateFor('33612345678')).toBeNull();
  });

  it('keeps commas in the description, the last column, and drops quotes around it', () => {
    const deck = MessageRateDeck.parse(`${HEADER}\r\n44,0.035,0,"United Kingdom, mobile"\r\n`);
    expect(deck.rateFor('447700900123')?.description).toBe('United Kingdom, mobile');
  });

  it('names the file, the line and the problem of the first bad row', () => {
    const parse = (csv: string) => () => MessageRateDeck.parse(csv, 'deck.csv');
    expect(parse('prefix,rate,description\n44,0.035,UK')).toThrow(
      'message rate deck deck.csv, line 1: the header must be prefix,rate_per_unit,carrier_fee_per_unit,description',
    );
    expect(parse(`${HEADER}\n44,0.035,0,UK\n+33,0.075,0,France`)).toThrow(
      'message rate deck deck.csv, line 3: prefix must be 1 to 15 digits',
    );
    expect(parse(`${HEADER}\n44,-0.035,0,UK`)).toThrow(
      'line 2: rate_per_unit must be a decimal number',
    );
    expect(parse(`${HEADER}\n44,0.035,,UK`)).toThrow(
      'line 2: carrier_fee_per_unit must be a decimal number',
    );
    expect(parse(`${HEADER}\n44,0.035,0,UK\n\n44,0.040,0,UK again`)).toThrow(
      'line 4: prefix 44 is listed twice',
    );
  });

  it('reads the deck the gateway ships', () => {
    const deck = MessageRateDeck.load('fixtures/message-rate-deck.csv');
    expect(deck.rateFor('14155550100')).toMatchObject({ ratePerUnit: '0.00500' });
  });
});
