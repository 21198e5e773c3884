import { readFileSync } from 'node:fs';

/** One row of a rate deck: what a minute to destinations under `prefix` costs. */
export interface Rate {
  /** Digits of an E.164 number without the plus, or `sip` for SIP URI destinations. */
  prefix: string;
  /** Per-minute rate as the deck writes it, e.g. `0.00850`; its decimals are kept. */
  ratePerMinute: string;
  description: string;
}

export const SIP_PREFIX = 'sip';
const HEADER = ['prefix', 'rate_per_minute', 'description'];
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
  private readonly rates = new Map<string, Rate>();
  private readonly longest: number;

  constructor(rates: Rate[]) {
    for (const rate of rates) this.rates.set(rate.prefix, rate);
    this.longest = Math.max(0, ...rates.map((r) => r.prefix.length));
  }

  static load(path: string): RateDeck {
    return RateDeck.parse(readFileSync(path, 'utf8'), path);
  }

  /** Throws RateDeckError naming the line of the first bad row. */
  static parse(csv: string, source = 'csv'): RateDeck {
    const lines = csv.split(/\r?\n/);
    const header = (lines[0] ?? '').split(',').map((h) => h.trim().toLowerCase());
    if (header.join(',') !== HEADER.join(',')) {
      throw new RateDeckError(source, 1, `the header must be ${HEADER.join(',')}`);
    }
    const rates: Rate[] = [];
    const seen = new Set<string>();
    lines.slice(1).forEach((text, k) => {
      const line = k + 2;
      if (text.trim() === '') return;
      const rate = parseRow(text, source, line);
      if (seen.has(rate.prefix)) {
        throw new RateDeckError(source, line, `prefix ${rate.prefix} is listed twice`);
      }
      seen.add(rate.prefix);
      rates.push(rate);
    });
    return new RateDeck(rates);
  }

  get size(): number {
    return this.rates.size;
  }

  /** The rate of a destination (a number, `+` and separators allowed, or a SIP URI), if any. */
  rateFor(destination: string): Rate | null {
    const key = destinationKey(destination);
    if (key === SIP_PREFIX) return this.rates.get(SIP_PREFIX) ?? null;
    for (let length = Math.min(key.length, this.longest); length > 0; length--) {
      const rate = this.rates.get(key.slice(0, length));
      if (rate) return rate;
    }
    return null;
  }
}

/** `sip` for a SIP URI, otherwise the digits of the number. */
export function destinationKey(destination: string): string {
  const trimmed = destination.trim();
  if (/^sips?:/i.test(trimmed) || trimmed.includes('@')) return SIP_PREFIX;
  return trimmed.replace(/\D/g, '');
}

function parseRow(text: string, source: string, line: number): Rate {
  // The description is the last column, so it may itself hold commas.
  const [rawPrefix = '', rawRate = '', ...rest] = text.split(',');
  const prefix = rawPrefix.trim().toLowerCase();
  const ratePerMinute = rawRate.trim();
  const description = rest
    .join(',')
    .trim()
    .replace(/^"(.*)"$/, '$1');
  if (prefix !== SIP_PREFIX && !DIGITS.test(prefix)) {
    throw new RateDeckError(source, line, `prefix must be 1 to 15 digits or sip, got "${prefix}"`);
  }
  if (!RATE.test(ratePerMinute)) {
    throw new RateDeckError(
      source,
      line,
      `rate_per_minute must be a decimal number such as 0.00850, got "${ratePerMinute}"`,
    );
  }
  return { prefix, ratePerMinute, description };
}
