import { readFileSync } from 'node:fs';

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

const HEADER = ['prefix', 'rate_per_unit', 'carrier_fee_per_unit', 'description'];
const RATE = /^\d{1,6}(\.\d{1,10})?$/;

/**
 * Per-unit message rates by destination prefix, from a CSV file with the columns
 * `prefix,rate_per_unit,carrier_fee_per_unit,description`. A destination gets the row of the
 * longest prefix it starts with; one the deck does not list is not charged.
 */
export class MessageRateDeck {
  private readonly rates = new Map<string, MessageRate>();
  private readonly longest: number;

  constructor(rates: MessageRate[]) {
    for (const rate of rates) this.rates.set(rate.prefix, rate);
    this.longest = Math.max(0, ...rates.map((r) => r.prefix.length));
  }

  static load(path: string): MessageRateDeck {
    return MessageRateDeck.parse(readFileSync(path, 'utf8'), path);
  }

  /** Throws an Error naming the line of the first bad row. */
  static parse(csv: string, source = 'csv'): MessageRateDeck {
    const lines = csv.split(/\r?\n/);
    const header = (lines[0] ?? '').split(',').map((h) => h.trim().toLowerCase());
    const fail = (line: number, problem: string) =>
      new Error(`message rate deck ${source}, line ${line}: ${problem}`);
    if (header.join(',') !== HEADER.join(',')) throw fail(1, `the header must be ${HEADER}`);
    const rates: MessageRate[] = [];
    const seen = new Set<string>();
    lines.slice(1).forEach((text, k) => {
      if (text.trim() === '') return;
      const [prefix = '', rate = '', fee = '', ...rest] = text.split(',').map((c) => c.trim());
      if (!/^\d{1,15}$/.test(prefix)) throw fail(k + 2, `prefix must be 1 to 15 digits`);
      if (!RATE.test(rate)) throw fail(k + 2, `rate_per_unit must be a decimal number`);
      if (!RATE.test(fee)) throw fail(k + 2, `carrier_fee_per_unit must be a decimal number`);
      if (seen.has(prefix)) throw fail(k + 2, `prefix ${prefix} is listed twice`);
      seen.add(prefix);
      rates.push({
        prefix,
        ratePerUnit: rate,
        carrierFeePerUnit: fee,
        description: rest.join(','),
      });
    });
    return new MessageRateDeck(rates);
  }

  rateFor(digits: string): MessageRate | null {
    for (let length = Math.min(digits.length, this.longest); length > 0; length--) {
      const rate = this.rates.get(digits.slice(0, length));
      if (rate) return rate;
    }
    return null;
  }
}

const DECIMALS = 5;

/** `rate × units` with five decimals, computed on integers and rounded half up once. */
export function chargeUnits(rate: string, units: number): string {
  const [whole = '0', fraction = ''] = rate.split('.');
  const exact = BigInt(whole + fraction) * BigInt(units);
  const extra = fraction.length - DECIMALS;
  let scaled: bigint;
  if (extra <= 0) scaled = exact * 10n ** BigInt(-extra);
  else {
    const divisor = 10n ** BigInt(extra);
    scaled = (exact + divisor / 2n) / divisor;
  }
  const digits = scaled.toString().padStart(DECIMALS + 1, '0');
  return `${digits.slice(0, -DECIMALS)}.${digits.slice(-DECIMALS)}`;
}

/** A rate as the records show it: five decimals. */
export function formatRate(rate: string): string {
  return chargeUnits(rate, 1);
}
