import { addon } from './native-addon.js';
import { checkInt16Array, checkUint8Array } from './argument-checks.js';

/**
 * ITU-T G.711 companding of 16-bit linear PCM, one byte per sample, by lookup tables built
 * from the G.711 algorithm when the addon loads. Any length is accepted (framing is the
 * caller's), and every call returns a new array.
 *
 * Encoding reads the addon's tables from JavaScript: for a 20 ms frame the call into the addon,
 * and the buffer it allocates outside Node's pool, cost several times the table lookups
 * themselves. The bytes are cut from Node's Buffer pool (as Buffer.allocUnsafe's are), so a
 * caller that keeps them for long copies them (a slice of the pool holds all of it).
 */

/** Index: a 16-bit sample as unsigned (sample & 0xffff); value: its code. */
function encodeTable(encode: (pcm: Int16Array) => Buffer): Uint8Array {
  const every = new Int16Array(65536);
  for (let i = 0; i < every.length; i++) every[i] = i;
  return new Uint8Array(encode(every));
}

const MU_LAW = encodeTable(addon.muLawEncode);
const A_LAW = encodeTable(addon.aLawEncode);

function encodeBy(table: Uint8Array, pcm: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = table[pcm[i]! & 0xffff]!;
  return out;
}

/** PCMU (RTP payload type 0): 16-bit linear to mu-law. Silence (0) encodes to 0xFF. */
export function muLawEncode(pcm: Int16Array): Buffer {
  return encodeBy(MU_LAW, checkInt16Array(pcm, 'pcm'));
}

/** PCMU: mu-law to 16-bit linear (the G.711 14-bit value scaled by 4; range ±32124). */
export function muLawDecode(codes: Uint8Array): Int16Array {
  return addon.muLawDecode(checkUint8Array(codes, 'codes'));
}

/** PCMA (RTP payload type 8): 16-bit linear to A-law. Silence (0) encodes to 0xD5. */
export function aLawEncode(pcm: Int16Array): Buffer {
  return encodeBy(A_LAW, checkInt16Array(pcm, 'pcm'));
}

/** PCMA: A-law to 16-bit linear (the G.711 13-bit value scaled by 8; range ±32256). */
export function aLawDecode(codes: Uint8Array): Int16Array {
  return addon.aLawDecode(checkUint8Array(codes, 'codes'));
}
