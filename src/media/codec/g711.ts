import { addon } from './native-addon.js';
import { checkInt16Array, checkUint8Array } from './argument-checks.js';

/**
 * ITU-T G.711 companding of 16-bit linear PCM, one byte per sample, by lookup tables built
 * from the G.711 algorithm when the addon loads. Any length is accepted (framing is the
 * caller's), and every call returns a new array.
 */

/** PCMU (RTP payload type 0): 16-bit linear to mu-law. Silence (0) encodes to 0xFF. */
export function muLawEncode(pcm: Int16Array): Buffer {
  return addon.muLawEncode(checkInt16Array(pcm, 'pcm'));
}

/** PCMU: mu-law to 16-bit linear (the G.711 14-bit value scaled by 4; range ±32124). */
export function muLawDecode(codes: Uint8Array): Int16Array {
  return addon.muLawDecode(checkUint8Array(codes, 'codes'));
}

/** PCMA (RTP payload type 8): 16-bit linear to A-law. Silence (0) encodes to 0xD5. */
export function aLawEncode(pcm: Int16Array): Buffer {
  return addon.aLawEncode(checkInt16Array(pcm, 'pcm'));
}

/** PCMA: A-law to 16-bit linear (the G.711 13-bit value scaled by 8; range ±32256). */
export function aLawDecode(codes: Uint8Array): Int16Array {
  return addon.aLawDecode(checkUint8Array(codes, 'codes'));
}
