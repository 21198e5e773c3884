const FRAME_MS = 20;
/** A tick may come this much early (timer jitter) and still send. */
const TICK_EARLY_MS = 2;
/**
 * After a frame sent on arrival, how long past a frame the ticks wait for the next arrival
 * before sending anything else (silence): a late chunk then goes out as it arrives instead of
 * queueing behind a silence frame for the rest of the talkspurt.
 */
const ARRIVAL_GRACE_MS = 40;
/** Queued frames beyond which audio arriving at real time is sent at twice the pace. */
const CATCH_UP_FRAMES = 2;

/**
 * When a leg sends its next frame. Its 20 ms ticks drive it, as they always have, until audio
 * arrives to be sent (a stream's playAudio): that frame goes at once, up to 20 ms sooner, and
 * while audio keeps arriving every 20 ms it goes out as it arrives and the ticks wait for it.
 * The leg sends a frame per 20 ms on average (twice that for a moment to catch up a backlog),
 * and its timestamps run on as usual.
 */
export class SendPacer {
  private lastSendAt = -Infinity;
  private lastOnArrival = false;

  /**
   * Whether a tick due at `at` sends, now: always while the ticks drive the leg, and for a
   * catch-up tick (the worker was late); once arriving audio sent a frame, not within a frame
   * of it (the arrival took this tick's place) and, with nothing queued (`ready()` false),
   * not before a frame and a grace period, so the next arrival can take this place too.
   * `ready` is only asked in that last case, so a tick-driven leg pays nothing for it.
   */
  tickSends(now: number, at: number, ready: () => boolean): boolean {
    if (!this.lastOnArrival || now - at >= FRAME_MS) return true;
    const elapsed = now - this.lastSendAt;
    if (elapsed >= FRAME_MS + ARRIVAL_GRACE_MS) return true;
    if (elapsed < FRAME_MS - TICK_EARLY_MS) return false;
    return ready();
  }

  /**
   * Whether audio that has just arrived goes now: at once when the leg was idle (nothing was
   * queued), at twice the pace when a backlog of frames is queued, else when a frame is due.
   */
  arrivalSends(now: number, idle: boolean, backlogFrames: number): boolean {
    const gap = idle
      ? 0
      : backlogFrames >= CATCH_UP_FRAMES
        ? FRAME_MS / 2
        : FRAME_MS - TICK_EARLY_MS;
    return now - this.lastSendAt >= gap;
  }

  /** Whether the frames so far were sent by the ticks (the next arrival starts a talkspurt). */
  get tickDriven(): boolean {
    return !this.lastOnArrival;
  }

  sent(now: number, onArrival: boolean): void {
    this.lastSendAt = now;
    this.lastOnArrival = onArrival;
  }
}
