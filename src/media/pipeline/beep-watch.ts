import { goertzelPower } from '../dtmf/goertzel.js';
import { frameEnergy, isQuiet } from './frame-level.js';

/** The tone's share of the frame's energy at its strongest frequency: a beep is nearly pure. */
const PURITY = 0.6;
/** Voicemail beeps sit in this band. */
const LOW_HZ = 400;
const HIGH_HZ = 2500;
const STEP_HZ = 25;
/** Frames of one steady tone that make a beep (160 ms at 20 ms). */
const BEEP_FRAMES = 8;
/** How far the strongest frequency may wander between frames of one beep. */
const SAME_TONE_HZ = 50;

/**
 * Waits for a voicemail beep (answer XML Wait with beep: the wait ends once a beep is heard):
 * one steady, nearly pure tone between 400 and 2500 Hz for at least 160 ms. Speech (many
 * frequencies, never steady that long) and DTMF (two tones, neither with most of the energy)
 * are not beeps. Fed one frame per 20 ms tick, or null when nothing arrived.
 */
export class BeepWatch {
  private elapsedMs = 0;
  private toneHz: number | null = null;
  private toneFrames = 0;

  constructor(
    private readonly maxMs: number,
    private readonly rate: number,
    private readonly frameMs = 20,
    /** Frames of one steady tone that make a beep. */
    private readonly beepFrames = BEEP_FRAMES,
  ) {}

  /** True once a beep was heard, false when maxMs passed first, null to go on. */
  tick(frame: Int16Array | null): boolean | null {
    this.elapsedMs += this.frameMs;
    const hz = frame === null ? null : pureToneHz(frame, this.rate);
    if (hz !== null && this.toneHz !== null && Math.abs(hz - this.toneHz) <= SAME_TONE_HZ) {
      this.toneFrames++;
    } else {
      this.toneFrames = hz === null ? 0 : 1;
      this.toneHz = hz;
    }
    if (this.toneFrames >= this.beepFrames) return true;
    if (this.elapsedMs >= this.maxMs) return false;
    return null;
  }
}

/** The frequency of a frame that is one loud, nearly pure tone in the beep band; else null. */
export function pureToneHz(frame: Int16Array, rate: number): number | null {
  const n = frame.length;
  const energy = frameEnergy(frame);
  if (isQuiet(energy, n)) return null;
  let bestHz = 0;
  let bestPower = 0;
  for (let hz = LOW_HZ; hz <= HIGH_HZ; hz += STEP_HZ) {
    const power = goertzelPower(frame, 0, n, hz, rate);
    if (power > bestPower) {
      bestPower = power;
      bestHz = hz;
    }
  }
  // A pure tone of energy E over n samples gives a power of about E * n / 2 at its frequency.
  return bestPower / ((energy * n) / 2) >= PURITY ? bestHz : null;
}
