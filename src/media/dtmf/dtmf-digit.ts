/** The sixteen DTMF keys. */
export type DtmfDigit =
  '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9' | '*' | '#' | 'A' | 'B' | 'C' | 'D';

/** RFC 4733 3.2 table 1: event codes 0-9, then * (10), # (11) and A-D (12-15). */
export const DTMF_DIGITS: readonly DtmfDigit[] = [
  '0',
  '1',
  '2',
  '3',
  '4',
  '5',
  '6',
  '7',
  '8',
  '9',
  '*',
  '#',
  'A',
  'B',
  'C',
  'D',
];

export function isDtmfDigit(value: string): value is DtmfDigit {
  return (DTMF_DIGITS as readonly string[]).includes(value);
}

/** The RFC 4733 event code of a digit. */
export function eventOfDigit(digit: DtmfDigit): number {
  return DTMF_DIGITS.indexOf(digit);
}

/** The digit of an RFC 4733 event code, null for other events (flash is 16). */
export function digitOfEvent(event: number): DtmfDigit | null {
  return DTMF_DIGITS[event] ?? null;
}

/** ITU-T Q.23: the low (row) and high (column) group frequencies in Hz, and the keypad. */
export const ROWS = [697, 770, 852, 941] as const;
export const COLUMNS = [1209, 1336, 1477, 1633] as const;
export const KEYPAD: readonly (readonly DtmfDigit[])[] = [
  ['1', '2', '3', 'A'],
  ['4', '5', '6', 'B'],
  ['7', '8', '9', 'C'],
  ['*', '0', '#', 'D'],
];

/** The row and column frequencies a digit's tone is made of. */
export function toneFrequencies(digit: DtmfDigit): [number, number] {
  const row = KEYPAD.findIndex((keys) => keys.includes(digit));
  const column = KEYPAD[row]!.indexOf(digit);
  return [ROWS[row]!, COLUMNS[column]!];
}
