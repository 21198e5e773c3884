import { invalidParameter } from './errors.js';

/**
 * A request field that holds an object: as JSON sends it, or as JSON text, which is how form
 * bodies carry one. Throws a 400 naming the field otherwise.
 */
export function bodyObject(raw: unknown, name: string): Record<string, unknown> {
  let value = raw;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw invalidParameter(`${name} must be an object`);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidParameter(`${name} must be an object`);
  return value as Record<string, unknown>;
}
