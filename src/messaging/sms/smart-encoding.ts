/**
 * Look-alike characters replaced by GSM 03.38 ones when smart encoding is on, so that a text
 * typed with curly quotes or long dashes goes as GSM (160 characters a part) instead of UCS-2
 * (70). Each entry: the character and what replaces it.
 */
export const SMART_REPLACEMENTS: ReadonlyArray<[string, string]> = [
  ['\u2018', "'"], // left single quotation mark
  ['\u2019', "'"], // right single quotation mark, apostrophe
  ['\u201A', "'"], // single low-9 quotation mark
  ['\u201B', "'"], // single high-reversed-9 quotation mark
  ['\u2032', "'"], // prime
  ['\u00B4', "'"], // acute accent
  ['\u0060', "'"], // grave accent (not in GSM)
  ['\u201C', '"'], // left double quotation mark
  ['\u201D', '"'], // right double quotation mark
  ['\u201E', '"'], // double low-9 quotation mark
  ['\u2033', '"'], // double prime
  ['\u00AB', '"'], // left-pointing double angle quotation mark
  ['\u00BB', '"'], // right-pointing double angle quotation mark
  ['\u2010', '-'], // hyphen
  ['\u2011', '-'], // non-breaking hyphen
  ['\u2012', '-'], // figure dash
  ['\u2013', '-'], // en dash
  ['\u2014', '-'], // em dash
  ['\u2015', '-'], // horizontal bar
  ['\u2212', '-'], // minus sign
  ['\u2026', '...'], // horizontal ellipsis
  ['\u2022', '*'], // bullet
  ['\u00B7', '.'], // middle dot
  ['\u00A0', ' '], // no-break space
  ['\u2002', ' '], // en space
  ['\u2003', ' '], // em space
  ['\u2009', ' '], // thin space
  ['\u200A', ' '], // hair space
  ['\u202F', ' '], // narrow no-break space
  ['\u200B', ''], // zero-width space
  ['\uFEFF', ''], // zero-width no-break space
  ['\u02C6', '^'], // modifier letter circumflex
  ['\u02DC', '~'], // small tilde
  ['\u2039', '<'], // single left-pointing angle quotation mark
  ['\u203A', '>'], // single right-pointing angle quotation mark
];

const TABLE = new Map(SMART_REPLACEMENTS);

export function smartEncode(text: string): string {
  let out = '';
  for (const ch of text) out += TABLE.get(ch) ?? ch;
  return out;
}
