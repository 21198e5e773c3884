import { describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import {
  messageIdKeys,
  parseDeliveryReceipt,
} from '../../../../src/messaging/sms/delivery-receipt.js';
import {
  PartAssembler,
  type AssembledMessage,
} from '../../../../src/messaging/sms/part-assembler.js';

describe('delivery receipts', () => {
  it('reads the text form', () => {
    const receipt = parseDeliveryReceipt({
      text: 'id:0A1B2C sub:001 dlvrd:001 submit date:2411241530 done date:241124153012 stat:DELIVRD err:000 text:hello',
    });
    expect(receipt).toMatchObject({
      messageId: '0A1B2C',
      stat: 'DELIVRD',
      outcome: 'delivered',
      errorCode: '000',
    });
    expect(receipt!.doneDate!.toISOString()).toBe('2024-11-24T15:30:12.000Z');
  });

  it('prefers the TLVs and maps network errors to messaging error codes', () => {
    const absent = parseDeliveryReceipt({
      text: 'id:999 stat:DELIVRD',
      receiptedMessageId: 'abc',
      messageState: 5,
      networkErrorCode: Buffer.from([3, 0, 27]),
    });
    expect(absent).toMatchObject({ messageId: 'abc', stat: 'UNDELIV', errorCode: '80', err: '27' });
    const unknown = parseDeliveryReceipt({ text: 'id:1 stat:UNDELIV err:001' });
    expect(unknown!.errorCode).toBe('50');
    expect(parseDeliveryReceipt({ text: 'id:1 stat:EXPIRED err:000' })!.errorCode).toBe('80');
    expect(parseDeliveryReceipt({ text: 'id:1 stat:REJECTD' })!.errorCode).toBe('100');
    expect(parseDeliveryReceipt({ text: 'id:1 stat:ENROUTE' })!.outcome).toBe('pending');
  });

  it('is null for a text that is no receipt', () => {
    expect(parseDeliveryReceipt({ text: 'see you at 5' })).toBeNull();
  });

  it('matches ids written in hex, decimal, with leading zeros or in another case', () => {
    const stored = messageIdKeys('0001A2B')[0]!;
    expect(messageIdKeys('6699')).toContain(stored);
    expect(messageIdKeys('1a2b')).toContain(stored);
    expect(messageIdKeys('01A2B')[0]).toBe(stored);
  });
});

describe('joining inbound parts', () => {
  const setup = (timeoutMs = 1000) => {
    const scheduler = new ManualScheduler();
    const done: AssembledMessage[] = [];
    const assembler = new PartAssembler({ scheduler, timeoutMs, onComplete: (m) => done.push(m) });
    return { scheduler, done, assembler };
  };
  const part = (sequence: number, text: string, total = 3) => ({
    key: 'a|b',
    reference: 7,
    total,
    sequence,
    text,
  });

  it('joins parts arriving out of order, once, and ignores a duplicate', () => {
    const { done, assembler } = setup();
    assembler.add(part(3, 'c'));
    assembler.add(part(1, 'a'));
    assembler.add(part(1, 'X'));
    expect(done).toHaveLength(0);
    assembler.add(part(2, 'b'));
    expect(done).toEqual([{ key: 'a|b', text: 'abc', parts: 3, missing: [] }]);
    expect(assembler.size).toBe(0);
  });

  it('hands on what came when the rest does not arrive in time, naming the gap', () => {
    const { scheduler, done, assembler } = setup();
    assembler.add(part(1, 'a'));
    assembler.add(part(3, 'c'));
    scheduler.advance(999);
    expect(done).toHaveLength(0);
    scheduler.advance(1);
    expect(done).toEqual([{ key: 'a|b', text: 'ac', parts: 3, missing: [2] }]);
  });

  it('refuses a sequence out of range', () => {
    const { assembler } = setup();
    expect(assembler.add(part(4, 'x'))).toBe(false);
    expect(assembler.add(part(0, 'x'))).toBe(false);
  });
});
