/** A Linux thread's policy and real-time priority, from fields 41 and 40 of its stat line. */
export function threadScheduling(statLine: string): { policy: number; priority: number } {
  const fields = statLine.slice(statLine.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so field n is fields[n - 3].
  return { priority: Number(fields[40 - 3]), policy: Number(fields[41 - 3]) };
}
