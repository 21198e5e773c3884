/** How a check came out: `warn` is worth a look, `FAIL` stops the doctor's exit status at 1. */
export type CheckStatus = 'ok' | 'warn' | 'FAIL';

/** One line of the doctor's report: what was checked and what to change. */
export interface CheckResult {
  status: CheckStatus;
  /** One word, such as `http` or `sip-udp`, so the lines line up. */
  name: string;
  message: string;
}

export const ok = (name: string, message: string): CheckResult => ({
  status: 'ok',
  name,
  message,
});

export const warn = (name: string, message: string): CheckResult => ({
  status: 'warn',
  name,
  message,
});

export const fail = (name: string, message: string): CheckResult => ({
  status: 'FAIL',
  name,
  message,
});

/** The message of an error as a short phrase: the system code when there is one. */
export function reason(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (e?.code && e.message && !e.message.includes(e.code)) return `${e.code}: ${e.message}`;
  return e?.message ?? String(error);
}
