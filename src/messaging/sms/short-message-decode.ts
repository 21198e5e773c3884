import { decodeGsm7 } from './gsm7.js';

export class SmsDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SmsDecodeError';
  }
}

export interface Concatenation {
  reference: number;
  total: number;
  sequence: number;
  sixteenBit: boolean;
}

/**
 * The user data header at the start of `bytes` (3GPP TS 23.040 9.2.3.24): its length and the
 * concatenation element, 8-bit (IEI 0x00) or 16-bit (IEI 0x08) reference; other elements skipped.
 */
export function parseUdh(bytes: Buffer): { concat: Concatenation | null; headerLength: number } {
  if (bytes.length < 1) throw new SmsDecodeError('the user data header is empty');
  const length = bytes[0]!;
  if (length + 1 > bytes.length)
    throw new SmsDecodeError(
      `the user data header says ${length} octets but ${bytes.length - 1} follow`,
    );
  let concat: Concatenation | null = null;
  let at = 1;
  while (at < length + 1) {
    const iei = bytes[at]!;
    const size = bytes[at + 1];
    if (size === undefined || at + 2 + size > length + 1)
      throw new SmsDecodeError('an information element runs past the user data header');
    const data = bytes.subarray(at + 2, at + 2 + size);
    if (iei === 0x00 && size === 3)
      concat = { reference: data[0]!, total: data[1]!, sequence: data[2]!, sixteenBit: false };
    else if (iei === 0x08 && size === 4)
      concat = {
        reference: data.readUInt16BE(0),
        total: data[2]!,
        sequence: data[3]!,
        sixteenBit: true,
      };
    at += 2 + size;
  }
  return { concat, headerLength: length + 1 };
}

/**
 * A delivered short_message as text, after its UDH when the esm_class says there is one.
 * data_coding 0 is GSM 03.38 (unpacked), 1 IA5 (ASCII), 3 Latin-1, 8 UCS-2 (UTF-16BE);
 * 23.038's general groups 0xF0-0xF3 / 0xF4-0xF7 give GSM or 8-bit data.
 */
export function decodeShortMessage(
  bytes: Buffer,
  dataCoding: number,
  udhIndicator: boolean,
): { text: string; concat: Concatenation | null } {
  let body = bytes;
  let concat: Concatenation | null = null;
  if (udhIndicator) {
    const udh = parseUdh(bytes);
    concat = udh.concat;
    body = bytes.subarray(udh.headerLength);
  }
  return { text: decodeText(body, dataCoding), concat };
}

export function decodeText(body: Buffer, dataCoding: number): string {
  if (dataCoding === 0 || (dataCoding & 0xfc) === 0xf0) return decodeGsm7(body);
  if (dataCoding === 1) return body.toString('ascii');
  if (dataCoding === 3 || dataCoding === 4 || (dataCoding & 0xfc) === 0xf4)
    return body.toString('latin1');
  if (dataCoding === 8) {
    if (body.length % 2 !== 0)
      throw new SmsDecodeError(`a UCS-2 short message has an odd length (${body.length} octets)`);
    let text = '';
    for (let k = 0; k < body.length; k += 2) text += String.fromCharCode(body.readUInt16BE(k));
    return text;
  }
  throw new SmsDecodeError(`data_coding ${dataCoding} is not one voxgate decodes (0, 1, 3, 8)`);
}
