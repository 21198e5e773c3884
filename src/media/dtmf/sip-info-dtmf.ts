import { isDtmfDigit, type DtmfDigit } from './dtmf-digit.js';
import { DtmfParseError } from './dtmf-parse-error.js';

/** A digit carried by a SIP INFO request. */
export interface SipInfoDigit {
  readonly digit: DtmfDigit;
  /** From Duration= in application/dtmf-relay, in ms; null when not given. */
  readonly durationMs: number | null;
}

/** Some phones send * and # as their RFC 4733 event codes. */
const EVENT_CODE_DIGITS: Readonly<Record<string, DtmfDigit>> = { '10': '*', '11': '#' };

function readDigit(value: string, where: string): DtmfDigit {
  const digit = EVENT_CODE_DIGITS[value] ?? value.toUpperCase();
  if (!isDtmfDigit(digit)) {
    throw new DtmfParseError(`${where} "${value}" is not a DTMF digit (0-9, *, #, A-D)`);
  }
  return digit;
}

function parseDtmfRelay(body: string): SipInfoDigit {
  const fields = new Map<string, string>();
  for (const line of body.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const equals = line.indexOf('=');
    if (equals < 0) throw new DtmfParseError(`dtmf-relay line "${line}" has no "="`);
    fields.set(line.slice(0, equals).trim().toLowerCase(), line.slice(equals + 1).trim());
  }
  const signal = fields.get('signal');
  if (signal === undefined) throw new DtmfParseError('dtmf-relay body has no Signal= line');
  const digit = readDigit(signal, 'dtmf-relay Signal');
  const duration = fields.get('duration');
  if (duration === undefined) return { digit, durationMs: null };
  if (!/^\d+$/.test(duration) || Number(duration) === 0) {
    throw new DtmfParseError(`dtmf-relay Duration "${duration}" is not a positive number of ms`);
  }
  return { digit, durationMs: Number(duration) };
}

/**
 * Reads the digit of a SIP INFO body: `application/dtmf-relay` (`Signal=5` and `Duration=160`
 * lines) or `application/dtmf` (the digit alone).
 */
/** Whether a SIP INFO of this Content-Type can carry a digit at all. */
export function carriesDtmf(contentType: string): boolean {
  const type = mediaType(contentType);
  return type === 'application/dtmf-relay' || type === 'application/dtmf';
}

const mediaType = (contentType: string) => (contentType.split(';')[0] ?? '').trim().toLowerCase();

export function parseSipInfoDtmf(contentType: string, body: string): SipInfoDigit {
  const type = mediaType(contentType);
  if (type === 'application/dtmf-relay') return parseDtmfRelay(body);
  if (type === 'application/dtmf') {
    const value = body.trim();
    if (value === '') throw new DtmfParseError('application/dtmf body is empty');
    return { digit: readDigit(value, 'application/dtmf body'), durationMs: null };
  }
  throw new DtmfParseError(
    `content type "${contentType}" carries no DTMF: expected application/dtmf-relay or application/dtmf`,
  );
}
