const PHONE_NUMBER = /^\+?(\d+)$/;

/**
 * The test for a `from_number` or `to_number` filter. Calls placed through the API keep their
 * numbers as `+<digits>`, callers' numbers come as their SIP From user wrote them, and clients
 * filter with or without the `+` (or with a `+` that an unencoded query string turned into a
 * space): a filter that reads as a phone number matches the same digits either way. Anything
 * else (a SIP user such as `alice`) matches exactly.
 */
export function numberFilter(query: string): (stored: string) => boolean {
  const digits = PHONE_NUMBER.exec(query.trim())?.[1];
  if (digits === undefined) return (stored) => stored === query;
  return (stored) => PHONE_NUMBER.exec(stored)?.[1] === digits;
}
