import { readFileSync } from 'node:fs';
import { DeckRowError, PrefixTable, readDeckCsv } from '../core/prefix-deck.js';

/** One row of the message rate deck: what one unit (SMS part) to `prefix` costs. */
export interface MessageRate {
  /** Digits of an E.164 number without the plus. */
  prefix: string;
  /** Per unit, as the deck writes it, e.g. `0.00250`. */
  ratePerUnit: string;
  /** Carrier fee per unit (e.g. US 10DLC or toll-free surcharges), `0` when none. */
  carrierFeePerUnit: string;
  description: string;
}

const COLUMNS = ['prefix', 'rate_per_unit', 'carrier_fee_per_unit', 'description'];
const RATE = /^\d{1,6}(\.\d{1,10})?$/;

/**
 * Per-unit message rates by destination prefix, from a CSV file with the columns
 * `prefix,rate_per_unit,carrier_fee_per_unit,description`. A destination gets the row of the
 * longest prefix it starts with; one the deck does not list is not charged.
 */
export class MessageRateDeck {
  private readonly rates: PrefixTable<MessageRate>;

  constructor(rates: MessageRate[]) {
    this.rates = new PrefixTable(rates);
  }

  static load(path: string): MessageRateDeck {
    return MessageRateDeck.parse(readFileSync(path, 'utf8'), path);
  }

  /** Throws an Error naming the line of the first bad row. */
  static parse(csv: string, source = 'csv'): MessageRateDeck {
    const fail = (line: number, problem: string) =>
      new Error(`message rate deck ${source}, line ${line}: ${problem}`);
    return new MessageRateDeck(readDeckCsv(csv, COLUMNS, parseRow, fail));
  }

  rateFor(digits: string): MessageRate | null {
    return this.rates.longestMatch(digits);
  }
}

function parseRow([prefix = '', rate = '', fee = '', description = '']: string[]): MessageRate {
  if (!/^\d{1,15}$/.test(prefix)) throw new DeckRowError(`prefix must be 1 to 15 digits`);
  if (!RATE.test(rate)) throw new DeckRowError(`rate_per_unit must be a decimal number`);
  if (!RATE.test(fee)) throw new DeckRowError(`carrier_fee_per_unit must be a decimal number`);
  return { prefix, ratePerUnit: rate, carrierFeePerUnit: fee, description };
}
