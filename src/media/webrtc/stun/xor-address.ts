import { isIP } from 'node:net';
import { MAGIC_COOKIE } from './stun-message.js';

/** An IP address and UDP port, as a socket reports where a datagram came from. */
export interface TransportAddress {
  readonly address: string;
  readonly port: number;
}

const FAMILY_IPV4 = 0x01;
const FAMILY_IPV6 = 0x02;

function ipv6Bytes(address: string): Buffer {
  let text = address.split('%')[0] ?? '';
  // An embedded IPv4 tail (::ffff:192.0.2.1) is two 16-bit words.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  let words = groups(head);
  if (tail !== undefined) {
    const rest = groups(tail);
    words = [...words, ...Array<string>(8 - words.length - rest.length).fill('0'), ...rest];
  }
  const bytes = Buffer.alloc(16);
  words.forEach((word, i) => bytes.writeUInt16BE(parseInt(word, 16), i * 2));
  return bytes;
}

function ipv6Text(bytes: Buffer): string {
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push(bytes.readUInt16BE(i).toString(16));
  // RFC 5952 4.2: the longest run of two or more zero words becomes "::".
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8;) {
    if (words[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === '0') j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j;
  }
  if (best.start < 0) return words.join(':');
  const head = words.slice(0, best.start).join(':');
  const tail = words.slice(best.start + best.length).join(':');
  return `${head}::${tail}`;
}

/*
 * RFC 8489 14.2, XOR-MAPPED-ADDRESS:
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |0 0 0 0 0 0 0 0|    Family     |         X-Port                |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                X-Address (Variable)
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * X-Port is the port XOR the cookie's top 16 bits; an IPv4 X-Address is XOR the cookie, an
 * IPv6 one XOR the cookie followed by the transaction id.
 */
function xorMask(transactionId: Buffer): Buffer {
  const mask = Buffer.alloc(16);
  mask.writeUInt32BE(MAGIC_COOKIE, 0);
  transactionId.copy(mask, 4);
  return mask;
}

export function xorAddressValue(where: TransportAddress, transactionId: Buffer): Buffer {
  const family = isIP(where.address);
  if (family === 0) throw new TypeError(`Expected an IP address but received "${where.address}"`);
  const raw =
    family === 4 ? Buffer.from(where.address.split('.').map(Number)) : ipv6Bytes(where.address);
  const mask = xorMask(transactionId);
  const value = Buffer.alloc(4 + raw.length);
  value[1] = family === 4 ? FAMILY_IPV4 : FAMILY_IPV6;
  value.writeUInt16BE(where.port ^ (MAGIC_COOKIE >>> 16), 2);
  for (let i = 0; i < raw.length; i++) value[4 + i] = raw[i]! ^ mask[i]!;
  return value;
}

export function readXorAddress(value: Buffer, transactionId: Buffer): TransportAddress | null {
  const family = value[1];
  const length = family === FAMILY_IPV4 ? 4 : family === FAMILY_IPV6 ? 16 : 0;
  if (length === 0 || value.length !== 4 + length) return null;
  const mask = xorMask(transactionId);
  const raw = Buffer.alloc(length);
  for (let i = 0; i < length; i++) raw[i] = value[4 + i]! ^ mask[i]!;
  const port = value.readUInt16BE(2) ^ (MAGIC_COOKIE >>> 16);
  return { address: length === 4 ? [...raw].join('.') : ipv6Text(raw), port };
}
