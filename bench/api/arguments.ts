/** A command-line value that must be a whole number of at least 1, named by its flag in the error. */
export function positiveInteger(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`Expected a positive integer for ${flag} but received ${text}`);
  return n;
}
