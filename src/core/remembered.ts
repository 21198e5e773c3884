/**
 * A pure lookup with its answers remembered: the same phone numbers come again and again, and
 * libphonenumber takes tens of µs per number, which the main thread pays on every call. At
 * most `limit` answers are kept; a full table starts afresh.
 */
export function remembered<T>(lookup: (key: string) => T, limit: number): (key: string) => T {
  const answers = new Map<string, T>();
  return (key) => {
    if (answers.has(key)) return answers.get(key) as T;
    const answer = lookup(key);
    if (answers.size >= limit) answers.clear();
    answers.set(key, answer);
    return answer;
  };
}
