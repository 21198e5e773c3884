import { describe, expect, it } from 'vitest';
import { multiplyDecimal } from '../../../src/core/decimal-amount.js';

describe('multiplyDecimal', () => {
  it('multiplies exactly, with five decimals', () => {
    expect(multiplyDecimal('0.00850', 3)).toBe('0.02550');
    expect(multiplyDecimal('0.035', 1)).toBe('0.03500');
    expect(multiplyDecimal('12', 2)).toBe('24.00000');
    expect(multiplyDecimal('0.00850', 0)).toBe('0.00000');
    // 0.1 × 3 is 0.30000000000000004 in binary floating point.
    expect(multiplyDecimal('0.1', 3)).toBe('0.30000');
    expect(multiplyDecimal('0.00001', 10n ** 12n)).toBe('10000000.00000');
  });

  it('rounds half up once, after multiplying, when the rate has more decimals', () => {
    expect(multiplyDecimal('0.000015', 1)).toBe('0.00002');
    expect(multiplyDecimal('0.000014', 1)).toBe('0.00001');
    // Rounding the rate first would give 0.00002 × 7 = 0.00014.
    expect(multiplyDecimal('0.000015', 7)).toBe('0.00011');
  });

  it('refuses a rate that is not a plain decimal and a quantity that is not whole', () => {
    for (const rate of ['-0.01', '1e-3', '.5', '0.5.1', ''])
      expect(() => multiplyDecimal(rate, 1)).toThrow(`received "${rate}"`);
    for (const quantity of [-1, 1.5, Number.NaN, 2 ** 60])
      expect(() => multiplyDecimal('0.1', quantity)).toThrow(RangeError);
  });
});
