import { readFileSync } from 'node:fs';
import { DeckRowError, PrefixTable, readDeckCsv } from '../../core/prefix-deck.js';

/** One row of a rate deck: what a minute to destinations under `prefix` costs. */
export interface Rate {
  /** Digits of an E.164 number without the plus, or `sip` for SIP URI destinations. */
  prefix: string;
  /** Per-minute rate as the deck writes it, e.g. `0.00850`; its decimals are kept. */
  ratePerMinute: string;
  description: string;
}

export const SIP_PREFIX = 'sip';
const COLUMNS = ['prefix', 'rate_per_minute', 'description'];
const RATE = /^\d{1,6}(\.\d{1,10})?$/;
const DIGITS = /^\d{1,15}$/;

export class RateDeckError extends Error {
  constructor(source: string, line: number, problem: string) {
    super(`rate deck ${source}, line ${line}: ${problem}`);
    this.name = 'RateDeckError';
  }
}

/**
 * Per-minute rates by destination prefix, read from a CSV file with the columns
 * `prefix,rate_per_minute,description`. A destination gets the rate of the longest prefix it
 * starts with; SIP URI destinations get the `sip` row.
 */
export class RateDeck {
  private readonly rates: PrefixTable<Rate>;

  constructor(rates: Rate[]) {
    this.rates = new PrefixTable(rates);
  }

  static load(path: string): RateDeck {
    return RateDeck.parse(readFileSync(path, 'utf8'), path);
  }

  /** Throws RateDeckError naming the line of the first bad row. */
  static parse(csv: string, source = 'csv'): RateDeck {
    return new RateDeck(
      readDeckCsv(
        csv,
        COLUMNS,
        parseRow,
        (line, problem) => new RateDeckError(source, line, problem),
      ),
    );
  }

  get size(): number {
    return this.rates.size;
  }

  /** The rate of a destination (a number, `+` and separators allowed, or a SIP URI), if any. */
  rateFor(destination: string): Rate | null {
    const key = destinationKey(destination);
    if (key === SIP_PREFIX) return this.rates.exact(SIP_PREFIX);
    return this.rates.longestMatch(key);
  }
}

/** `sip` for a SIP URI, otherwise the digits of the number. */
export function destinationKey(destination: string): string {
  const trimmed = destination.trim();
  if (/^sips?:/i.test(trimmed) || trimmed.includes('@')) return SIP_PREFIX;
  return trimmed.replace(/\D/g, '');
}

function parseRow([rawPrefix = '', ratePerMinute = '', description = '']: string[]): Rate {
  const prefix = rawPrefix.toLowerCase();
  if (prefix !== SIP_PREFIX && !DIGITS.test(prefix)) {
    throw new DeckRowError(`prefix must be 1 to 15 digits or sip, got "${prefix}"`);
  }
  if (!RATE.test(ratePerMinute)) {
    throw new DeckRowError(
      `rate_per_minute must be a decimal number such as 0.00850, got "${ratePerMinute}"`,
    );
  }
  return { prefix, ratePerMinute, description };
}
