import { describe, expect, it } from 'vitest';
import { chargeCall } from '../../../../src/call/billing/call-charge.js';

describe('chargeCall', () => {
  it('bills nothing for an unanswered call, keeping the destination rate', () => {
    expect(chargeCall(null, '0.00850')).toEqual({
      bill_duration: 0,
      billed_duration: 0,
      total_rate: '0.00850',
      total_amount: '0.00000',
    });
  });

  it.each([
    // seconds answered, billed seconds, amount at 0.00850 a minute
    [0, 60, '0.00850'],
    [1, 60, '0.00850'],
    [59, 60, '0.00850'],
    [60, 60, '0.00850'],
    [61, 120, '0.01700'],
    [119, 120, '0.01700'],
    [120, 120, '0.01700'],
    [121, 180, '0.02550'],
    [3600, 3600, '0.51000'],
    [14400, 14400, '2.04000'],
  ])('answered %i s bills %i s for %s', (seconds, billed, amount) => {
    expect(chargeCall(seconds, '0.00850')).toEqual({
      bill_duration: seconds,
      billed_duration: billed,
      total_rate: '0.00850',
      total_amount: amount,
    });
  });

  it('multiplies exactly where binary floating point would not', () => {
    // 0.035 * 3 is 0.10500000000000001 in floating point.
    expect(chargeCall(180, '0.035').total_amount).toBe('0.10500');
    expect(chargeCall(600, '0.1').total_amount).toBe('1.00000');
    expect(chargeCall(60, '12.5').total_amount).toBe('12.50000');
    expect(chargeCall(60, '0').total_amount).toBe('0.00000');
  });

  it('rounds half up once, on the amount, when a rate has more than 5 decimals', () => {
    // 0.012345 * 3 = 0.037035 → 0.03704 (rounding the rate first would give 0.03705).
    expect(chargeCall(180, '0.012345')).toMatchObject({
      total_rate: '0.012345',
      total_amount: '0.03704',
    });
    expect(chargeCall(60, '0.000004').total_amount).toBe('0.00000');
    expect(chargeCall(60, '0.000005').total_amount).toBe('0.00001');
  });

  it('refuses a duration or a rate it cannot bill', () => {
    expect(() => chargeCall(-1, '0.01')).toThrow(
      'Expected a whole number of seconds of at least 0 for answeredSeconds but received -1',
    );
    expect(() => chargeCall(1.5, '0.01')).toThrow(RangeError);
    expect(() => chargeCall(60, '1e-3')).toThrow(
      'Expected a decimal rate such as 0.00850 but received "1e-3"',
    );
  });
});
