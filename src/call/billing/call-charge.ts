import { multiplyDecimal } from '../../core/decimal-amount.js';

/**
 * What a finished call costs, by the billing rules of the voice document: only answered calls
 * are billed, in 60-second increments with one increment as the minimum. Amounts are computed
 * on integers (BigInt), never on binary floating point, so they are exact to the last decimal.
 */
export interface CallCharge {
  /** Seconds from answer to end; 0 when the call was not answered. */
  bill_duration: number;
  /** bill_duration rounded up to the increment, at least one increment; 0 when not answered. */
  billed_duration: number;
  /** The per-minute rate as the rate deck writes it. */
  total_rate: string;
  /** billed minutes × total_rate, with AMOUNT_DECIMALS decimals. */
  total_amount: string;
}

export const BILLING_INCREMENT_SECONDS = 60;

/** The rate given to a destination the deck has no row for: nothing is charged. */
export const NO_RATE = '0.00000';

/**
 * Charges a call. `answeredSeconds` is the time from answer to end in whole seconds, or null
 * when the call was never answered (busy, no answer, rejected, failed).
 */
export function chargeCall(answeredSeconds: number | null, ratePerMinute: string): CallCharge {
  if (answeredSeconds === null) {
    return {
      bill_duration: 0,
      billed_duration: 0,
      total_rate: ratePerMinute,
      total_amount: multiplyDecimal(ratePerMinute, 0),
    };
  }
  if (!Number.isInteger(answeredSeconds) || answeredSeconds < 0) {
    throw new RangeError(
      `Expected a whole number of seconds of at least 0 for answeredSeconds but received ${answeredSeconds}`,
    );
  }
  const increments = Math.max(1, Math.ceil(answeredSeconds / BILLING_INCREMENT_SECONDS));
  const billed = increments * BILLING_INCREMENT_SECONDS;
  const minutes = BigInt(billed / 60);
  return {
    bill_duration: answeredSeconds,
    billed_duration: billed,
    total_rate: ratePerMinute,
    total_amount: multiplyDecimal(ratePerMinute, minutes),
  };
}
