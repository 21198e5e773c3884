import { describe, expect, it } from 'vitest';
import { RateDeck } from '../../../src/call/billing/rate-deck.js';
import { buildCallRecord } from '../../../src/call/call-record.js';
import { hangupCause } from '../../../src/call/hangup-causes.js';
import { hangupParams } from '../../../src/call/hangup-params.js';

const deck = RateDeck.parse('prefix,rate_per_minute,description\n1,0.00850,US');
const T0 = Date.UTC(2024, 4, 2, 13, 45, 10, 0);

describe('hangupParams', () => {
  it('gives the durations of the times it shows, as the call record does', () => {
    // Started late in one second, answered early in the next, ended late in another: rounding
    // the milliseconds would say 10 s and 9 s; the times shown (cut to the second) say 9 and 8.
    const times = { initiation: T0 + 900, answer: T0 + 1_100, end: T0 + 9_950 };
    const params = hangupParams(
      { cause: hangupCause('Normal Hangup'), source: 'Callee', status: 'completed' },
      times,
    );
    expect(params).toMatchObject({
      StartTime: '2024-05-02 13:45:10',
      AnswerTime: '2024-05-02 13:45:11',
      EndTime: '2024-05-02 13:45:19',
      Duration: '9',
      BillDuration: '8',
    });
    const record = buildCallRecord(
      {
        callUuid: 'c',
        requestUuid: null,
        direction: 'outbound',
        from: '14155550100',
        to: '14155550111',
        initiatedAt: times.initiation,
        answeredAt: times.answer,
        endedAt: times.end,
        hangupCauseCode: 4000,
        hangupCauseName: 'Normal Hangup',
        hangupSource: 'Callee',
        sourceIp: '203.0.113.7',
        account: 'MA',
        subaccount: null,
      },
      deck,
    );
    expect([record.call_duration, record.bill_duration]).toEqual([9, 8]);
  });

  it('bills nothing of a call never answered', () => {
    const params = hangupParams(
      { cause: hangupCause('No Answer'), source: 'Callee', status: 'no-answer' },
      { initiation: T0 + 400, answer: null, end: T0 + 30_600 },
    );
    expect(params).toMatchObject({ AnswerTime: '', Duration: '30', BillDuration: '0' });
  });
});
