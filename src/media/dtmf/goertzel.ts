/**
 * Power of one frequency in a block of samples, by the Goertzel recurrence. For a sine of
 * amplitude A filling the block, the result is about (A * length / 2)^2.
 */
export function goertzelPower(
  samples: Int16Array,
  start: number,
  length: number,
  frequency: number,
  sampleRate: number,
): number {
  const coefficient = 2 * Math.cos((2 * Math.PI * frequency) / sampleRate);
  let previous = 0;
  let beforePrevious = 0;
  for (let i = start; i < start + length; i++) {
    const current = (samples[i] ?? 0) + coefficient * previous - beforePrevious;
    beforePrevious = previous;
    previous = current;
  }
  return (
    previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
  );
}
