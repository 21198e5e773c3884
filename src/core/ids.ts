import { randomBytes, randomFillSync, randomInt, randomUUID } from 'node:crypto';

const UPPER_ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomFrom(alphabet: string, length: number): string {
  // randomInt is uniform (rejection sampling), unlike byte % alphabet.length.
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export const newUuid = (): string => randomUUID();

/** Main account ids are `MA` + 18 upper-case alphanumerics, subaccounts `SA` + 18. */
export const newAuthId = (kind: 'MA' | 'SA'): string => kind + randomFrom(UPPER_ALNUM, 18);

/** Auth tokens are 40 characters. */
export const newAuthToken = (): string => randomFrom(ALNUM, 40);

export const randomDigits = (length: number): string => randomFrom('0123456789', length);

/** A numeric id of `length` digits with no leading zero, as endpoint and app ids look. */
export const newNumericId = (length: number): string =>
  randomFrom('123456789', 1) + randomFrom('0123456789', length - 1);

/**
 * Random octets as hex, drawn from a pool refilled 4 KiB at a time: SIP takes a few for every
 * branch and tag, and one system call per message would show under load.
 */
export function randomHex(bytes: number): string {
  if (bytes > POOL_SIZE) return randomBytes(bytes).toString('hex');
  if (poolAt + bytes > POOL_SIZE) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const out = pool.toString('hex', poolAt, poolAt + bytes);
  poolAt += bytes;
  return out;
}

const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let poolAt = POOL_SIZE;
