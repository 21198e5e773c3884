import { frameEnergy, isQuiet } from './frame-level.js';

/**
 * Waits for the far end to fall silent (answer XML Wait with silence: "if no voice or sound is
 * detected for minSilence milliseconds, end the wait"). Fed one frame per 20 ms tick, or null
 * when nothing arrived (which is silence too).
 */
export class SilenceWatch {
  private quietMs = 0;
  private elapsedMs = 0;

  constructor(
    private readonly silenceMs: number,
    private readonly maxMs: number,
    private readonly frameMs = 20,
  ) {}

  /** True once silent for silenceMs, false when maxMs passed first, null to go on. */
  tick(frame: Int16Array | null): boolean | null {
    this.elapsedMs += this.frameMs;
    this.quietMs =
      frame === null || isQuiet(frameEnergy(frame), frame.length) ? this.quietMs + this.frameMs : 0;
    if (this.quietMs >= this.silenceMs) return true;
    if (this.elapsedMs >= this.maxMs) return false;
    return null;
  }
}
