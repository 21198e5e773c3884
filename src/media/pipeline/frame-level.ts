/**
 * RMS under which a frame is quiet: about -40 dBFS, below speech at any sensible level and
 * above the noise floor of a telephone line.
 */
export const QUIET_RMS = 330;

/** The sum of the squares of a frame's samples. */
export function frameEnergy(frame: Int16Array): number {
  let sum = 0;
  for (let i = 0; i < frame.length; i++) sum += frame[i]! * frame[i]!;
  return sum;
}

/** Whether `samples` samples of this energy are under QUIET_RMS (no samples are). */
export function isQuiet(energy: number, samples: number): boolean {
  return samples === 0 || Math.sqrt(energy / samples) < QUIET_RMS;
}
