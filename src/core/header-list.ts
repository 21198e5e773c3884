/**
 * A `name=value,name=value` list, as Dial's sipHeaders and a stream's extra_headers are
 * written. Names are header tokens; values may not hold whitespace or control characters; a
 * name may appear once. '' is the empty list.
 */
export type HeaderListReading =
  | { ok: true; headers: Record<string, string> }
  | { ok: false; problem: 'malformed' | 'repeated'; name?: string };

const NAME = /^[A-Za-z0-9._-]+$/;
const VALUE = /^[^\s\x00-\x1f\x7f]+$/;

export function readHeaderList(text: string): HeaderListReading {
  const headers: Record<string, string> = {};
  if (text === '') return { ok: true, headers };
  for (const pair of text.split(',')) {
    const eq = pair.indexOf('=');
    if (eq < 0) return { ok: false, problem: 'malformed' };
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (!NAME.test(name) || !VALUE.test(value)) return { ok: false, problem: 'malformed' };
    if (Object.hasOwn(headers, name)) return { ok: false, problem: 'repeated', name };
    Object.defineProperty(headers, name, { value, enumerable: true });
  }
  return { ok: true, headers };
}
