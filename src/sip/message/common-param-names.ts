import type { CharCodes } from './coded-text.js';

/**
 * Parameter names nearly every message carries (RFC 3261 19.1.1, 20.42, 20.20; RFC 3581), as
 * the string literals. A Map keyed by an interned string hashes and compares it at once, where
 * a name sliced out of the message would be hashed and then compared char by char: reading the
 * parameters of a Via, From or Request-URI costs about half as much with these.
 */
const COMMON_PARAM_NAMES = [
  'branch',
  'expires',
  'lr',
  'maddr',
  'method',
  'q',
  'received',
  'rport',
  'tag',
  'transport',
  'ttl',
  'user',
];

// By length and last char: no two of the names above agree in both.
const slotOf = (length: number, last: number): number => length * 128 + (last & 127);
const BY_SLOT: (readonly [name: string, codes: Uint8Array] | undefined)[] = Array.from(
  { length: slotOf(16, 0) },
  () => undefined,
);
for (const name of COMMON_PARAM_NAMES) {
  const slot = slotOf(name.length, name.charCodeAt(name.length - 1));
  if (BY_SLOT[slot] !== undefined) throw new Error(`Two common parameter names share ${slot}`);
  BY_SLOT[slot] = [name, Buffer.from(name, 'latin1')];
}

/** The common parameter name whose char codes are codes[from, to), or undefined. */
export function commonParamName(codes: CharCodes, from: number, to: number): string | undefined {
  const known = to - from < 16 ? BY_SLOT[slotOf(to - from, codes[to - 1]!)] : undefined;
  if (known === undefined) return undefined;
  const [name, nameCodes] = known;
  for (let i = 0; i < nameCodes.length; i++) if (codes[from + i] !== nameCodes[i]) return undefined;
  return name;
}
