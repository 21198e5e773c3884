import { SipParseError } from './sip-parse-error.js';
import { singleRow } from './scalar-headers.js';

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

// rfc1123-date = wkday "," SP date1 SP time SP "GMT"
// date1 = 2DIGIT SP month SP 4DIGIT; time = 2DIGIT ":" 2DIGIT ":" 2DIGIT
const RFC1123_DATE =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d\d) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{4}) (\d\d):(\d\d):(\d\d) GMT$/i;

/**
 * Date = SIP-date (RFC 3261 20.17), as milliseconds since the epoch; null when absent.
 * RFC 3261 25.1 allows only "GMT" as the zone (RFC 4475 3.1.2.11: not EST, not UT).
 */
export function parseDate(rows: string[]): number | null {
  const row = singleRow(rows, 'Date');
  if (row === null) return null;
  const match = RFC1123_DATE.exec(row);
  if (match === null) throw new SipParseError('Malformed Date header', { header: 'Date' });
  const [, day, month, year, hour, minute, second] = match;
  const time = Date.UTC(
    Number(year),
    MONTHS.indexOf(month!.toLowerCase()),
    Number(day),
    Number(hour),
    Number(minute),
    Number(second),
  );
  const valid = Number(day) >= 1 && Number(day) <= 31 && Number(hour) <= 23;
  if (!valid || Number(minute) > 59 || Number(second) > 60) {
    throw new SipParseError('Malformed Date header', { header: 'Date' });
  }
  return time;
}
