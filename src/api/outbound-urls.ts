import { invalidParameter } from '../core/errors.js';
import type { OutboundGuard } from '../core/outbound-guard.js';

/** Fields of a request holding URLs the gateway will fetch or connect to, by name. */
export type OutboundUrlFields = Record<string, string | readonly string[] | null | undefined>;

/**
 * Refuses a request whose URLs the outbound policy refuses already: a literal address, or a
 * host that resolves now to a refused one, answers 400 naming the field and the rule. A host
 * that does not resolve yet is let through, as before: the gateway checks every URL again
 * when it uses it, and a refusal then takes the path a failed fetch takes.
 */
export async function refuseOutboundUrls(
  guard: OutboundGuard,
  fields: OutboundUrlFields,
): Promise<void> {
  const checks = Object.entries(fields).flatMap(([field, value]) => {
    if (value === null || value === undefined) return [];
    const urls = typeof value === 'string' ? [value] : value;
    return urls
      .map((url, k) => ({ name: typeof value === 'string' ? field : `${field}[${k}]`, url }))
      .filter(({ url }) => url !== '');
  });
  const refusals = await Promise.all(checks.map(({ url }) => guard.refusalOf(url)));
  const first = refusals.findIndex((refusal) => refusal !== null);
  if (first >= 0)
    throw invalidParameter(`invalid ${checks[first]!.name}: ${refusals[first]!.message}`);
}

/** The named fields of a body, for refuseOutboundUrls. */
export function urlFieldsOf(body: unknown, names: readonly string[]): OutboundUrlFields {
  const fields: OutboundUrlFields = {};
  if (typeof body !== 'object' || body === null) return fields;
  for (const name of names) {
    const value = (body as Record<string, unknown>)[name];
    if (typeof value === 'string') fields[name] = value;
    else if (Array.isArray(value)) fields[name] = value.filter((v) => typeof v === 'string');
  }
  return fields;
}
