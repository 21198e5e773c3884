import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

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
  return parsePhoneNumberFromString(`+${digits}`)?.isValid() ? digits : null;
}

/** ISO 3166-1 alpha-2 country of E.164 digits, '' when unknown. */
export function countryOf(digits: string): string {
  return parsePhoneNumberFromString(`+${digits}`)?.country ?? '';
}
