/**
 * Message text is kept as octet strings (latin1: one char per octet), which is lossless and
 * fast. Text meant for people (display names, reason phrases) is UTF-8 on the wire (RFC 3261
 * 25.1, TEXT-UTF8); these two functions move between the two forms.
 */

// fatal: octets that are not UTF-8 stay octets; ignoreBOM: a BOM is content, kept.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text an octet string encodes as UTF-8; the octets themselves when they are not UTF-8. */
export function textFromOctets(octets: string): string {
  if (isAscii(octets)) return octets;
  try {
    return utf8.decode(Buffer.from(octets, 'latin1'));
  } catch {
    return octets;
  }
}

/** The UTF-8 octets of a text, as an octet string. */
export function octetsFromText(text: string): string {
  return isAscii(text) ? text : Buffer.from(text, 'utf8').toString('latin1');
}

/**
 * A copy of an octet string that keeps nothing else alive. Values read from a message are views
 * of its whole text; state kept long after the message (a dialog, which lingers 32 s after its
 * call) holds copies instead, not a message per value.
 */
export function detached(octets: string): string {
  return Buffer.from(octets, 'latin1').toString('latin1');
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}
