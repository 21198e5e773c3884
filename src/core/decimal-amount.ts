/** Decimals of every amount and rate in the records. */
export const AMOUNT_DECIMALS = 5;

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * `rate × quantity` with AMOUNT_DECIMALS decimals, e.g. `0.00850` × 3 → `0.02550`. Computed on
 * integers (BigInt), never binary floating point, and rounded half up once, at the end, so a
 * rate with more decimals than the records keep is still charged exactly.
 */
export function multiplyDecimal(rate: string, quantity: number | bigint): string {
  const match = DECIMAL.exec(rate);
  if (!match) {
    throw new RangeError(`Expected a decimal rate such as 0.00850 but received "${rate}"`);
  }
  if (typeof quantity === 'number' && !(Number.isSafeInteger(quantity) && quantity >= 0)) {
    throw new RangeError(`Expected a whole quantity of at least 0 but received ${quantity}`);
  }
  const fraction = match[2] ?? '';
  const exact = BigInt(match[1]! + fraction) * BigInt(quantity);
  const extra = fraction.length - AMOUNT_DECIMALS;
  let units: bigint;
  if (extra <= 0) units = exact * 10n ** BigInt(-extra);
  else {
    const divisor = 10n ** BigInt(extra);
    units = (exact + divisor / 2n) / divisor;
  }
  const digits = units.toString().padStart(AMOUNT_DECIMALS + 1, '0');
  return `${digits.slice(0, -AMOUNT_DECIMALS)}.${digits.slice(-AMOUNT_DECIMALS)}`;
}
