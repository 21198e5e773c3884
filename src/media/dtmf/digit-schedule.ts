import { isDtmfDigit, type DtmfDigit } from './dtmf-digit.js';
import { DtmfParseError } from './dtmf-parse-error.js';

/** One digit to send, at a time from the start of the string. */
export interface ScheduledDigit {
  readonly digit: DtmfDigit;
  readonly atMs: number;
  readonly durationMs: number;
}

export interface DigitSchedule {
  readonly digits: readonly ScheduledDigit[];
  /** When the last tone and gap are over. */
  readonly totalMs: number;
}

export interface DigitScheduleOptions {
  /** Tone length; 100 ms by default. */
  readonly toneMs?: number;
  /** Silence after each tone; 100 ms by default. */
  readonly gapMs?: number;
}

/** `w` waits half a second, `W` a whole one. */
const WAITS: Readonly<Record<string, number>> = { w: 500, W: 1000 };

/** The longest digit string sent at once: minutes of tones already, and a bounded queue. */
export const MAX_DIGIT_STRING = 1000;

/**
 * Reads a digit string such as `1234w#W99` into the times its digits are to be sent.
 * Valid characters are 0-9, *, #, A-D and the waits w and W.
 */
export function parseDigitString(text: string, options: DigitScheduleOptions = {}): DigitSchedule {
  const toneMs = options.toneMs ?? 100;
  const gapMs = options.gapMs ?? 100;
  if (text.length === 0) throw new DtmfParseError('digit string is empty');
  if (text.length > MAX_DIGIT_STRING) {
    throw new DtmfParseError(
      `digit string is ${text.length} characters, over the limit of ${MAX_DIGIT_STRING}`,
    );
  }
  const digits: ScheduledDigit[] = [];
  let atMs = 0;
  [...text].forEach((character, index) => {
    const wait = WAITS[character];
    if (wait !== undefined) {
      atMs += wait;
    } else if (isDtmfDigit(character)) {
      digits.push({ digit: character, atMs, durationMs: toneMs });
      atMs += toneMs + gapMs;
    } else {
      throw new DtmfParseError(
        `invalid character "${character}" at position ${index + 1} of digit string "${text}": ` +
          'valid are 0-9, *, #, A-D, w (0.5 s wait) and W (1 s wait)',
      );
    }
  });
  return { digits, totalMs: atMs };
}
