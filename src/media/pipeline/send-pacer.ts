const FRAME_MS = 20;
/** A frame may go this much before its time (timer jitter) and still count as on time. */
const EARLY_MS = 2;
/**
 * How early a frame that came just in time (no other frame queued) may go on its arrival: a
 * server streaming at real time whose first chunk came a few ms late would otherwise have
 * every next chunk wait for a tick. Bounded per frame (the talkspurt's time does not move), so
 * audio never runs ahead.
 */
const JUST_IN_TIME_EARLY_MS = 8;
/**
 * In a talkspurt, how long past a frame the ticks wait for audio to arrive before sending
 * what there is (a part of a frame, or silence): a late chunk then goes out as it arrives
 * instead of queueing behind a silence frame for the rest of the talkspurt.
 */
const ARRIVAL_GRACE_MS = 40;

/**
 * When a leg sends its next frame. A leg saying nothing sends on its 20 ms ticks. Audio
 * arriving to be sent (a stream's playAudio) starts a talkspurt at once, up to 20 ms before
 * the next tick; from then on the talkspurt keeps time by its audio: frame n goes no sooner
 * than 20n ms after the first, whether a tick or an arrival sends it, however far ahead of
 * time the audio came. A frame that is late (its audio came late) goes as soon as it can, and
 * the ones behind it follow at up to twice the pace until the talkspurt is back on time.
 */
export class SendPacer {
  private lastSendAt = -Infinity;
  /** Whether the last frame sent carried sound: a talkspurt is under way. */
  private audible = false;
  /** When the talkspurt's next frame is due by its own time. */
  private due = -Infinity;

  /** Whether the last frame sent carried sound (the next arrival does not start a talkspurt). */
  get talking(): boolean {
    return this.audible;
  }

  /**
   * Whether a tick sends, now: always while the leg says nothing; in a talkspurt, once the
   * next frame is due and a whole frame is waiting (`ready()`), or, when none is, once a frame
   * and the grace period have passed since the last. `ready` is only asked in a talkspurt, so
   * a silent leg pays nothing for it.
   */
  tickSends(now: number, ready: () => boolean): boolean {
    if (!this.audible) return true;
    if (now < this.due - EARLY_MS) return false;
    if (now - this.lastSendAt >= FRAME_MS + ARRIVAL_GRACE_MS) return true;
    return ready();
  }

  /**
   * Whether a whole frame of audio that has just arrived goes now: at once when it starts a
   * talkspurt, else once its frame is due (a little sooner when it is the only frame queued,
   * `queuedFrames` 1), and never within half a frame of the last.
   */
  arrivalSends(now: number, queuedFrames: number): boolean {
    if (!this.audible) return true;
    const early = queuedFrames <= 1 ? JUST_IN_TIME_EARLY_MS : EARLY_MS;
    return now >= this.due - early && now - this.lastSendAt >= FRAME_MS / 2;
  }

  /**
   * A frame went at `now`; `slot` is when a frame starting a talkspurt counts as sent (a
   * tick's due time, or the arrival's own time), and `audible` whether it carried sound.
   */
  sent(now: number, slot: number, audible: boolean): void {
    this.due = (this.audible ? this.due : slot) + FRAME_MS;
    this.lastSendAt = now;
    this.audible = audible;
  }
}
