import { describe, expect, it } from 'vitest';
import {
  decodeGsm7,
  encodeGsm7,
  gsm7Length,
  isGsm7,
  packSeptets,
  unpackSeptets,
} from '../../../../src/messaging/sms/gsm7.js';
import {
  concatenationUdh,
  planSms,
  smsLengthError,
} from '../../../../src/messaging/sms/sms-plan.js';
import {
  decodeShortMessage,
  SmsDecodeError,
} from '../../../../src/messaging/sms/short-message-decode.js';
import { smartEncode } from '../../../../src/messaging/sms/smart-encoding.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('GSM 03.38', () => {
  it("encodes '@' as 0x00 and '€' as the escape pair 1B 65, unpacked", () => {
    expect(hex(encodeGsm7('@'))).toBe('00');
    expect(hex(encodeGsm7('€'))).toBe('1b65');
    expect(hex(encodeGsm7('a@b€{}'))).toBe('6100621b651b281b29');
    expect(gsm7Length('a@b€{}')).toBe(9);
  });

  it('keeps the Greek capitals of the alphabet GSM and sends lower-case Greek as UCS-2', () => {
    expect(isGsm7('ΔΦΓΛΩΠΨΣΘΞ')).toBe(true);
    expect(hex(encodeGsm7('ΔΦΓΛΩΠΨΣΘΞ'))).toBe('10121314151617181919'.slice(0, 18) + '1a');
    expect(isGsm7('αβγ')).toBe(false);
    expect(planSms('Καλημέρα').encoding).toBe('ucs2');
  });

  it('decodes every septet and extension character back to itself', () => {
    const all = decodeGsm7(Uint8Array.from({ length: 128 }, (_, k) => k).filter((k) => k !== 0x1b));
    expect([...all]).toHaveLength(127);
    expect(decodeGsm7(encodeGsm7(all))).toBe(all);
    const extension = '\f^{}\\[~]|€';
    expect(decodeGsm7(encodeGsm7(extension))).toBe(extension);
    // An escape before a code the extension table lacks shows the base character.
    expect(decodeGsm7(Uint8Array.from([0x1b, 0x41]))).toBe('A');
  });

  it('packs and unpacks septets (23.038 6.1.2.1)', () => {
    // "hellohello" packed is the textbook E8329BFD4697D9EC37.
    const septets = encodeGsm7('hellohello');
    expect(hex(packSeptets(septets))).toBe('e8329bfd4697d9ec37');
    expect(decodeGsm7(unpackSeptets(packSeptets(septets), 10))).toBe('hellohello');
  });

  it('refuses a character outside the alphabet', () => {
    expect(() => encodeGsm7('ж')).toThrow('U+0436 is not in it');
  });
});

describe('parts', () => {
  it('sends 160 GSM characters in one part and 161 in two of 153 and 8', () => {
    expect(planSms('x'.repeat(160)).parts).toHaveLength(1);
    const two = planSms('x'.repeat(161));
    expect(two.parts.map((p) => p.length)).toEqual([153, 8]);
    expect(two.dataCoding).toBe(0);
  });

  it('sends 1,600 GSM characters in 11 parts', () => {
    const plan = planSms('y'.repeat(1600));
    expect(plan.parts).toHaveLength(11);
    expect(Buffer.concat(plan.parts).equals(plan.whole)).toBe(true);
  });

  it('never splits an escape pair: it moves whole to the next part', () => {
    const plan = planSms(`${'x'.repeat(152)}€${'t'.repeat(20)}`);
    expect(plan.parts[0]!.length).toBe(152);
    expect(hex(plan.parts[1]!.subarray(0, 2))).toBe('1b65');
  });

  it('sends 70 UCS-2 units in one part, 71 in two, and never splits a surrogate pair', () => {
    expect(planSms('ж'.repeat(70)).parts).toHaveLength(1);
    expect(planSms('ж'.repeat(71)).parts.map((p) => p.length / 2)).toEqual([67, 4]);
    const emoji = planSms(`${'ж'.repeat(66)}😀${'ж'.repeat(10)}`);
    expect(emoji.parts[0]!.length / 2).toBe(66);
    expect(hex(emoji.parts[1]!.subarray(0, 4))).toBe('d83dde00');
  });

  it('leaves room for the 16-bit reference header', () => {
    expect(planSms('x'.repeat(161), { sixteenBitReference: true }).parts[0]!.length).toBe(152);
    expect(planSms('ж'.repeat(71), { sixteenBitReference: true }).parts[0]!.length).toBe(132);
  });

  it('builds the 8-bit and 16-bit concatenation headers', () => {
    expect(hex(concatenationUdh(0x2a, 3, 2, false))).toBe('0500032a0302');
    expect(hex(concatenationUdh(0x1234, 3, 1, true))).toBe('060804123403' + '01');
  });

  it('names the limit a text is over', () => {
    expect(smsLengthError('x'.repeat(1600))).toBeNull();
    expect(smsLengthError('x'.repeat(1601))).toBe(
      'text is too long: at most 1,600 GSM characters (got 1,601)',
    );
    expect(smsLengthError('ж'.repeat(737))).toBeNull();
    expect(smsLengthError('ж'.repeat(740))).toBe(
      'text is too long: at most 737 UCS-2 units (got 740)',
    );
  });

  it('replaces look-alikes with GSM characters only when smart encoding is on', () => {
    const typed = '“Hello” – it’s done…';
    expect(planSms(typed).encoding).toBe('ucs2');
    expect(smartEncode(typed)).toBe('"Hello" - it\'s done...');
    const smart = planSms(typed, { smartEncoding: true });
    expect(smart.encoding).toBe('gsm7');
    expect(smart.text).toBe('"Hello" - it\'s done...');
  });
});

describe('decoding what a carrier delivers', () => {
  it('reads GSM, IA5, Latin-1 and UCS-2 text', () => {
    expect(decodeShortMessage(Buffer.from('001b65', 'hex'), 0, false).text).toBe('@€');
    expect(decodeShortMessage(Buffer.from('abc'), 1, false).text).toBe('abc');
    expect(decodeShortMessage(Buffer.from([0xe9]), 3, false).text).toBe('é');
    expect(decodeShortMessage(Buffer.from('d83dde00', 'hex'), 8, false).text).toBe('😀');
  });

  it('reads the 8-bit and 16-bit concatenation headers', () => {
    const eight = decodeShortMessage(Buffer.from('0500030a020168', 'hex'), 0, true);
    expect(eight).toEqual({
      text: 'h',
      concat: { reference: 10, total: 2, sequence: 1, sixteenBit: false },
    });
    const sixteen = decodeShortMessage(Buffer.from('0608040102030200690069', 'hex'), 8, true);
    expect(sixteen.concat).toEqual({ reference: 0x0102, total: 3, sequence: 2, sixteenBit: true });
    expect(sixteen.text).toBe('ii');
  });

  it('refuses what it cannot decode with a reason', () => {
    expect(() => decodeShortMessage(Buffer.from('0069ff', 'hex'), 8, false)).toThrow(
      SmsDecodeError,
    );
    expect(() => decodeShortMessage(Buffer.from('09000301', 'hex'), 0, true)).toThrow(
      'the user data header says 9 octets but 3 follow',
    );
    expect(() => decodeShortMessage(Buffer.from('00', 'hex'), 0x02, false)).toThrow(
      'data_coding 2 is not one voxgate decodes',
    );
  });
});
