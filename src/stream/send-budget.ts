/** The marks at which a stream's send buffer is reported as filling up (wire-compat.md). */
const MARKS = [30, 60, 90] as const;

export type DegradedMark = (typeof MARKS)[number];

/**
 * A stream's bounded send buffer, as bytes waiting to be sent: check() says which mark the
 * buffer has just passed on its way up (each once, until it drains below 30 % again), or
 * `overflow` past the bound.
 */
export class SendBudget {
  private passed = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`Expected a send buffer bound of at least 1 byte but received ${limit}`);
    }
  }

  check(waiting: number): DegradedMark | 'overflow' | null {
    if (waiting > this.limit) return 'overflow';
    const percent = (waiting / this.limit) * 100;
    if (percent < MARKS[0]) {
      this.passed = 0;
      return null;
    }
    let mark: DegradedMark | null = null;
    for (const m of MARKS) if (percent >= m && m > this.passed) mark = m;
    if (mark !== null) this.passed = mark;
    return mark;
  }
}
