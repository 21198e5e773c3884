import { QUIET_RMS } from '../pipeline/frame-level.js';

/**
 * A voice must stand at least this loud to take the floor: QUIET_RMS, about -40 dBFS (the
 * level under which the media plane calls a frame quiet).
 */
export const FLOOR_MIN_RMS = QUIET_RMS;
/**
 * How long a member must stay the loudest voice, without a break, to take the floor: 400 ms
 * (20 ticks). Shorter sounds (a cough, a word over another's speech) leave it where it is.
 */
export const FLOOR_HOLD_MS = 400;
const TICK_MS = 20;

/**
 * Who has the floor of a conference: the member who was the loudest voice above FLOOR_MIN_RMS
 * on every tick for FLOOR_HOLD_MS. The floor stays with its holder through silence and while
 * the holder is the loudest; it moves only when another member has been the loudest for the
 * whole hold, and it is nobody's once its holder leaves. `onChange` hears each new holder.
 */
export class ConferenceFloor {
  private current: string | null = null;
  private candidate: string | null = null;
  private ticks = 0;

  constructor(private readonly onChange: (holder: string) => void) {}

  get holder(): string | null {
    return this.current;
  }

  /**
   * One tick: `loudest` is the member whose voice had the most energy on it (sum of squares
   * over `samples` samples), null when no one's was heard.
   */
  tick(loudest: string | null, energy: number, samples: number): void {
    const heard = loudest !== null && samples > 0 && energy >= FLOOR_MIN_RMS ** 2 * samples;
    if (!heard || loudest === this.current) {
      this.candidate = null;
      this.ticks = 0;
      return;
    }
    if (loudest !== this.candidate) {
      this.candidate = loudest;
      this.ticks = 0;
    }
    this.ticks++;
    if (this.ticks * TICK_MS < FLOOR_HOLD_MS) return;
    this.current = loudest;
    this.candidate = null;
    this.ticks = 0;
    this.onChange(loudest);
  }

  /** A member left: it holds the floor no more, and its run towards it ends. */
  leave(member: string): void {
    if (this.current === member) this.current = null;
    if (this.candidate === member) {
      this.candidate = null;
      this.ticks = 0;
    }
  }
}
