import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TYPICAL } from './typical-messages.js';

/**
 * Seeded mutations of SIP messages (byte flips, truncations, duplications, splices, inserted
 * rows) built from the RFC 4475 set and typical traffic, for the fuzz tests.
 */
const FIXTURES = fileURLToPath(new URL('../../../../fixtures/sip/rfc4475/', import.meta.url));
export const CORPUS: Buffer[] = [
  ...readdirSync(FIXTURES)
    .filter((name) => name.endsWith('.dat'))
    .sort()
    .map((name) => readFileSync(FIXTURES + name)),
  ...Object.values(TYPICAL),
];

/** Octets that matter to the grammar, so mutations reach the parsers' edges. */
const INTERESTING = Buffer.from('\r\n \t:;,"<>\\%@[]=/?&*0129azAZ\x00\x7f\x80\xff.-_~\'');

const ROWS = [
  'Via: SIP/2.0/UDP [2001:db8::1]:5060;branch=z9hG4bK1;rport;received=2001:db8::2',
  'Contact: *',
  'Contact: "x" <sip:a@b;lr>;expires=0, <sips:c@[::1]:5061?Subject=x&Route=%3Csip:y%3E>',
  'Content-Length: 99999999999',
  'Max-Forwards: 256',
  'CSeq: 4294967296 INVITE',
  'WWW-Authenticate: Digest realm="a\\"b", nonce="x", qop="auth,auth-int"',
  'Proxy-Authorization: Bearer abc.def.ghi==',
  'Route: <sip:a@b>, <tel:+1234>',
  'Date: Sat, 15 Oct 2005 04:44:56 GMT',
  'Content-Type: text/plain;charset="utf-8"',
  'Require: 100rel, timer',
  ' folded continuation',
  'X-Weird: "unterminated',
];

export { seededRandom as prng } from '../../../support/prng.js';

export function mutate(random: () => number, corpus: readonly Buffer[] = CORPUS): Buffer {
  const pick = (n: number): number => Math.floor(random() * n);
  let data = Buffer.from(corpus[pick(corpus.length)]!);
  const rounds = 1 + pick(4);
  for (let r = 0; r < rounds && data.length > 0; r++) {
    const at = pick(data.length);
    switch (pick(7)) {
      case 0: // flip to an interesting octet
        data[at] = INTERESTING[pick(INTERESTING.length)]!;
        break;
      case 1: // flip to any octet
        data[at] = pick(256);
        break;
      case 2: // truncate
        data = data.subarray(0, at);
        break;
      case 3: {
        // duplicate a slice in place
        const end = Math.min(data.length, at + 1 + pick(64));
        data = Buffer.concat([data.subarray(0, end), data.subarray(at, end), data.subarray(end)]);
        break;
      }
      case 4: {
        // splice the tail of another message
        const other = corpus[pick(corpus.length)]!;
        data = Buffer.concat([data.subarray(0, at), other.subarray(pick(other.length))]);
        break;
      }
      case 5: {
        // insert a row after a line end
        const lineEnd = data.indexOf('\r\n', at);
        if (lineEnd === -1) break;
        const row = Buffer.from(`\r\n${ROWS[pick(ROWS.length)]}`, 'latin1');
        data = Buffer.concat([data.subarray(0, lineEnd), row, data.subarray(lineEnd)]);
        break;
      }
      default: // delete a range
        data = Buffer.concat([data.subarray(0, at), data.subarray(at + 1 + pick(16))]);
    }
  }
  return data;
}
