import { encodeGsm7, isGsm7, septetsOf } from './gsm7.js';
import { smartEncode } from './smart-encoding.js';

/** How a text goes out: its encoding and the payload of each part, without any UDH. */
export interface SmsPlan {
  encoding: 'gsm7' | 'ucs2';
  /** SMPP data_coding: 0 (SMSC default alphabet, GSM 03.38) or 8 (UCS-2). */
  dataCoding: 0 | 8;
  /** The text after smart encoding. */
  text: string;
  /** GSM: characters (an extension character counts one); UCS-2: UTF-16 code units. */
  characters: number;
  /** GSM: septets; UCS-2: UTF-16 code units. */
  septetsOrUnits: number;
  /** Each part's payload: unpacked septets or UTF-16BE. */
  parts: Buffer[];
  /** The whole text encoded, for message_payload. */
  whole: Buffer;
}

export interface SmsPlanOptions {
  smartEncoding?: boolean;
  /** Parts carry the 7-octet UDH with a 16-bit reference (one septet or unit less each). */
  sixteenBitReference?: boolean;
}

/** wire-compat-messaging.md: "One part carries 160 septets or 70 UCS-2 units. Concatenated
 * parts carry 153 septets or 67 UCS-2 units ... (152 / 66 with the 16-bit form)". */
const SINGLE = { gsm7: 160, ucs2: 70 };
const CONCATENATED = { gsm7: 153, ucs2: 67 };
const CONCATENATED_16 = { gsm7: 152, ucs2: 66 };
/** messaging document, Limits: "SMS text 1,600 GSM or 737 Unicode characters". */
export const MAX_GSM_CHARACTERS = 1600;
export const MAX_UCS2_UNITS = 737;

export function planSms(text: string, options: SmsPlanOptions = {}): SmsPlan {
  const { groups, ...layout } = layOut(text, options);
  if (layout.encoding === 'gsm7')
    return {
      ...layout,
      dataCoding: 0,
      parts: groups.map((g) => Buffer.from(encodeGsm7(g))),
      whole: Buffer.from(encodeGsm7(layout.text)),
    };
  return { ...layout, dataCoding: 8, parts: groups.map(utf16be), whole: utf16be(layout.text) };
}

/** How many parts `text` goes out in (the message's units), without encoding them. */
export function smsPartCount(text: string, options: SmsPlanOptions = {}): number {
  return layOut(text, options).groups.length;
}

interface Layout {
  encoding: 'gsm7' | 'ucs2';
  text: string;
  characters: number;
  septetsOrUnits: number;
  /** The text of each part. */
  groups: string[];
}

function layOut(text: string, options: SmsPlanOptions): Layout {
  const prepared = options.smartEncoding ? smartEncode(text) : text;
  const concatenated = options.sixteenBitReference ? CONCATENATED_16 : CONCATENATED;
  // Characters (GSM: one or two septets, so a boundary never falls inside an escape pair) or
  // code points (one or two UTF-16 units, so a surrogate pair is never split).
  const items = [...prepared];
  if (isGsm7(prepared)) {
    const sizes = items.map(septetsOf);
    const total = sizes.reduce((a, b) => a + b, 0);
    const limit = total <= SINGLE.gsm7 ? SINGLE.gsm7 : concatenated.gsm7;
    return {
      encoding: 'gsm7',
      text: prepared,
      characters: items.length,
      septetsOrUnits: total,
      groups: split(items, sizes, limit),
    };
  }
  const total = prepared.length;
  const limit = total <= SINGLE.ucs2 ? SINGLE.ucs2 : concatenated.ucs2;
  return {
    encoding: 'ucs2',
    text: prepared,
    characters: total,
    septetsOrUnits: total,
    groups: split(
      items,
      items.map((p) => p.length),
      limit,
    ),
  };
}

/** null when `text` is within the SMS limits; otherwise the error naming the limit. */
export function smsLengthError(text: string, options: SmsPlanOptions = {}): string | null {
  const prepared = options.smartEncoding ? smartEncode(text) : text;
  const number = (n: number) => n.toLocaleString('en-US');
  if (isGsm7(prepared)) {
    const characters = [...prepared].length;
    if (characters <= MAX_GSM_CHARACTERS) return null;
    return `text is too long: at most ${number(MAX_GSM_CHARACTERS)} GSM characters (got ${number(characters)})`;
  }
  if (prepared.length <= MAX_UCS2_UNITS) return null;
  return `text is too long: at most ${number(MAX_UCS2_UNITS)} UCS-2 units (got ${number(prepared.length)})`;
}

/** wire-compat-messaging.md: `05 00 03 ref total seq`, or `06 08 04 refHi refLo total seq`. */
export function concatenationUdh(
  reference: number,
  total: number,
  sequence: number,
  sixteenBit: boolean,
): Buffer {
  return sixteenBit
    ? Buffer.from([0x06, 0x08, 0x04, (reference >> 8) & 0xff, reference & 0xff, total, sequence])
    : Buffer.from([0x05, 0x00, 0x03, reference & 0xff, total, sequence]);
}

/** Splits items (each `sizes[k]` long) into groups of at most `limit`, never an item apart. */
function split(items: string[], sizes: number[], limit: number): string[] {
  const groups: string[] = [];
  let current = '';
  let used = 0;
  items.forEach((item, k) => {
    const size = sizes[k]!;
    if (used + size > limit) {
      groups.push(current);
      current = '';
      used = 0;
    }
    current += item;
    used += size;
  });
  groups.push(current);
  return groups;
}

function utf16be(text: string): Buffer {
  const out = Buffer.alloc(text.length * 2);
  for (let k = 0; k < text.length; k++) out.writeUInt16BE(text.charCodeAt(k), k * 2);
  return out;
}
