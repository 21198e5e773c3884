/**
 * The GSM 03.38 (3GPP TS 23.038, 6.2.1) default alphabet and its extension table, as SMPP
 * carries it with data_coding 0: one septet value per octet (unpacked).
 */

/** Code point of each septet 0x00-0x7F of the default alphabet; 0x1B is the escape. */
const DEFAULT_ALPHABET =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';

/** 23.038 6.2.1.1: the extension table, reached by 0x1B: form feed, ^ { } \ [ ~ ] | €. */
const EXTENSION: ReadonlyArray<[number, string]> = [
  [0x0a, '\f'],
  [0x14, '^'],
  [0x28, '{'],
  [0x29, '}'],
  [0x2f, '\\'],
  [0x3c, '['],
  [0x3d, '~'],
  [0x3e, ']'],
  [0x40, '|'],
  [0x65, '€'],
];

export const ESCAPE = 0x1b;

const BASIC = new Map<string, number>();
for (let code = 0; code < 128; code++)
  if (code !== ESCAPE) BASIC.set(DEFAULT_ALPHABET[code]!, code);
const EXTENDED = new Map<string, number>(EXTENSION.map(([code, ch]) => [ch, code]));
const EXTENDED_BY_CODE = new Map<number, string>(EXTENSION);

/** Whether every character of `text` is in the default alphabet or its extension table. */
export function isGsm7(text: string): boolean {
  for (const ch of text) if (!BASIC.has(ch) && !EXTENDED.has(ch)) return false;
  return true;
}

/** Septets `ch` takes: 1, 2 for an extension character, 0 when it is not GSM. */
export function septetsOf(ch: string): number {
  if (BASIC.has(ch)) return 1;
  return EXTENDED.has(ch) ? 2 : 0;
}

export function gsm7Length(text: string): number {
  let length = 0;
  for (const ch of text) length += septetsOf(ch);
  return length;
}

/** Unpacked septets; throws when a character is not GSM 03.38. */
export function encodeGsm7(text: string): Uint8Array {
  const out: number[] = [];
  for (const ch of text) {
    const basic = BASIC.get(ch);
    if (basic !== undefined) out.push(basic);
    else {
      const extended = EXTENDED.get(ch);
      if (extended === undefined)
        throw new RangeError(
          `Expected GSM 03.38 text but U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} is not in it`,
        );
      out.push(ESCAPE, extended);
    }
  }
  return Uint8Array.from(out);
}

/**
 * Unpacked septets to text. 23.038 6.2.1.1: an escape followed by a code the extension table
 * does not define shows the default alphabet's character; a trailing escape is dropped.
 */
export function decodeGsm7(bytes: Uint8Array): string {
  let text = '';
  for (let k = 0; k < bytes.length; k++) {
    const septet = bytes[k]! & 0x7f;
    if (septet !== ESCAPE) {
      text += DEFAULT_ALPHABET[septet];
      continue;
    }
    const next = bytes[k + 1];
    if (next === undefined) break;
    k++;
    text += EXTENDED_BY_CODE.get(next & 0x7f) ?? DEFAULT_ALPHABET[next & 0x7f];
  }
  return text;
}

/** 23.038 6.1.2.1: septets packed into octets, least significant bits first. */
export function packSeptets(septets: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil((septets.length * 7) / 8));
  let bit = 0;
  for (const septet of septets) {
    const byte = bit >> 3;
    const shift = bit & 7;
    out[byte]! |= (septet << shift) & 0xff;
    if (shift > 1) out[byte + 1]! |= septet >> (8 - shift);
    bit += 7;
  }
  return out;
}

/** The inverse of packSeptets for `count` septets. */
export function unpackSeptets(packed: Uint8Array, count: number): Uint8Array {
  const out = new Uint8Array(count);
  for (let k = 0; k < count; k++) {
    const bit = k * 7;
    const byte = bit >> 3;
    const shift = bit & 7;
    let value = packed[byte]! >> shift;
    if (shift > 1) value |= (packed[byte + 1] ?? 0) << (8 - shift);
    out[k] = value & 0x7f;
  }
  return out;
}
