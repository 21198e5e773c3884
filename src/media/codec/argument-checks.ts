/** Argument checks for the native wrappers: the C++ side trusts what it is given. */

export const SUPPORTED_RATES = [8000, 16000, 24000, 48000] as const;
export type SampleRate = (typeof SUPPORTED_RATES)[number];

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (ArrayBuffer.isView(value)) {
    const length = 'length' in value ? ` of ${String(value.length)}` : '';
    return `${value.constructor.name}${length}`;
  }
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return String(value);
  return typeof value;
}

export function checkInt16Array(value: unknown, name: string): Int16Array {
  if (!(value instanceof Int16Array)) {
    throw new TypeError(`Expected an Int16Array for ${name} but received ${describe(value)}`);
  }
  return value;
}

export function checkUint8Array(value: unknown, name: string): Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new TypeError(
      `Expected a Uint8Array or Buffer for ${name} but received ${describe(value)}`,
    );
  }
  return value;
}

export function checkRate(value: unknown, name: string): SampleRate {
  if (!SUPPORTED_RATES.includes(value as SampleRate)) {
    throw new RangeError(
      `Expected one of ${SUPPORTED_RATES.join(', ')} (Hz) for ${name} but received ${describe(value)}`,
    );
  }
  return value as SampleRate;
}

export function checkIntegerInRange(
  value: unknown,
  min: number,
  max: number,
  name: string,
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(
      `Expected an integer between ${min} and ${max} for ${name} but received ${describe(value)}`,
    );
  }
  return value;
}

export function checkFiniteNumber(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new RangeError(`Expected a finite number for ${name} but received ${describe(value)}`);
  }
  return value;
}
