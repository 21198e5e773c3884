import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { remembered } from './remembered.js';

/**
 * Parsing with the full metadata costs 10 to 20 µs a number, and the same numbers come back all
 * the time (an account's senders, a campaign's destinations): one parse answers both questions,
 * and the answers for the last several thousand numbers are kept.
 */
const describe = remembered((digits) => {
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  return { valid: parsed?.isValid() ?? false, country: parsed?.country ?? '' };
}, 10_000);

/**
 * `+14155550100`, `1 (415) 555-0100` or `14155550100` → `14155550100`, if it is a valid E.164
 * number; null otherwise. Spaces, dashes, dots and brackets are allowed between the digits.
 */
export function normaliseE164(raw: string): string | null {
  const digits = raw
    .trim()
    .replace(/[\s\-.()]/g, '')
    .replace(/^\+/, '');
  if (!/^[1-9]\d{6,14}$/.test(digits)) return null;
  return describe(digits).valid ? digits : null;
}

/** ISO 3166-1 alpha-2 country of E.164 digits, '' when unknown. */
export function countryOf(digits: string): string {
  return /^[1-9]\d{0,14}$/.test(digits) ? describe(digits).country : '';
}
