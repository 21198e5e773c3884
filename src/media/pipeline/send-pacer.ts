const FRAME_MS = 20;
/** A frame may go this much before its time (timer jitter) and still count as on time. */
const EARLY_MS = 2;
/**
 * How early a frame that came just in time (no other frame queued) may go on its arrival: a
 * server streaming at real time whose chunks come some ms apart from their times (its clock,
 * the network, a busy machine) would otherwise have a chunk wait for a tick whenever it came
 * early. The talkspurt's time does not move for it, so such frames never add up to running
 * ahead.
 */
const JUST_IN_TIME_EARLY_MS = 15;
/**
 * In a talkspurt, how long past a frame the ticks wait for audio to arrive before sending
 * what there is (a part of a frame, or silence): a late chunk then goes out as it arrives
 * instead of queueing behind a silence frame for the rest of the talkspurt.
 */
const ARRIVAL_GRACE_MS = 40;
/**
 * How far behind its time a talkspurt may be caught up (the frames behind a late one go as they
 * come): audio that came late, a burst after a stall included, is played as it
 * arrives again once this is made up, and a server that paused longer gains no more than this.
 */
const MAX_CATCH_UP_MS = 100;
/**
 * A gap in the audio up to this long (silence sent in its place) is audio that came late: the
 * talkspurt keeps its time and catches up. After a longer one, the next audio starts a new one.
 */
const RESUME_MS = 1000;
/**
 * How long a server's arrivals are watched before the talkspurt's time follows them, and how
 * far it may move earlier in all (see SendPacer.arrived).
 */
const FOLLOW_WINDOW_MS = 200;
const MAX_ADVANCE_MS = 100;

/**
 * When a leg sends its next frame. A leg saying nothing sends on its 20 ms ticks. Audio
 * arriving to be sent (a stream's playAudio) starts a talkspurt at once, up to 20 ms before
 * the next tick; from then on the talkspurt keeps time by its audio: frame n goes no sooner
 * than 20n ms after the first, whether a tick or an arrival sends it, however far ahead of
 * time the audio came. A frame that is late (its audio came late, or stopped for a moment and
 * came again in a burst) goes as soon as it can, and so do the ones behind it until the
 * talkspurt is back on time: at most MAX_CATCH_UP_MS of audio goes faster than real time.
 *
 * A talkspurt's time is set by its first frame, which may itself have come late (a server's
 * first answer is often slower than the next ones), so that a server then streaming at real
 * time would find a frame of its own queued at each arrival for the rest of the talkspurt: the
 * time follows the server's arrivals when, over FOLLOW_WINDOW_MS, they kept real time (the
 * queue did not grow) and every one came ahead of its frame's time, by at most MAX_ADVANCE_MS
 * in a talkspurt. Audio sent ahead of time fills the queue faster than it plays, so it keeps
 * to its time.
 */
export class SendPacer {
  private lastSendAt = -Infinity;
  /** Whether the last frame sent carried sound: a talkspurt is under way. */
  private audible = false;
  /** When the last frame with sound went. */
  private lastAudibleAt = -Infinity;
  /** When the talkspurt's next frame is due by its own time. */
  private due = -Infinity;
  /** How far this talkspurt's time has moved earlier to follow its arrivals (ms). */
  private advanced = 0;
  /** The arrivals watched: since when, the queue then, and the least any came ahead. */
  private watch: { since: number; queued: number; ahead: number } | null = null;

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
   * How long a whole frame of audio that has just arrived waits (ms): 0 when it goes now, at
   * once when it starts a talkspurt; Infinity while its frame is not due (a little sooner when
   * it is the only frame queued, `queuedFrames` 1), a tick or a later arrival sending it then;
   * 0 when it is behind its time; else (a little early) until half a frame has passed since
   * the last, whatever the ticks' phase (see catchUpSends).
   */
  arrivalWait(now: number, queuedFrames: number): number {
    if (!this.audible) return 0;
    this.arrived(now, queuedFrames);
    const early = queuedFrames <= 1 ? JUST_IN_TIME_EARLY_MS : EARLY_MS;
    if (now < this.due - early) return Infinity;
    // Behind its time: the audio came late, and goes as it comes until the talkspurt is on time.
    if (now >= this.due) return 0;
    return Math.max(0, this.lastSendAt + FRAME_MS / 2 - now);
  }

  /** Whether a frame that waited out arrivalWait() goes now (nothing went in between). */
  catchUpSends(now: number): boolean {
    return this.audible && now >= this.due - EARLY_MS && now - this.lastSendAt >= FRAME_MS / 2;
  }

  /**
   * A frame went at `now`; `slot` is when it counts as sent by the leg's clock (a tick's due
   * time, an arrival's own time, or, while the worker was behind its ticks, the first tick it
   * owed), and `audible` whether it carried sound. A talkspurt keeps time from its first
   * frame's slot, and catches up to at most MAX_CATCH_UP_MS behind the slots, so that time the
   * worker stood still, when the peer had no frame at all, is made up as well.
   */
  sent(now: number, slot: number, audible: boolean): void {
    if (audible) {
      const resumed = !this.audible;
      if (resumed && now - this.lastAudibleAt > RESUME_MS) {
        this.due = slot + FRAME_MS;
        this.advanced = 0;
      } else {
        // The talkspurt goes on (after silence sent in place of audio that came late, too).
        this.due = Math.max(this.due, slot - MAX_CATCH_UP_MS) + FRAME_MS;
      }
      if (resumed) this.watch = null;
      this.lastAudibleAt = now;
    }
    this.lastSendAt = now;
    this.audible = audible;
  }

  /**
   * Watches a talkspurt's arrivals: the newest whole frame (the last of `queuedFrames`) is due
   * 20 ms per frame after the next one; once the watch has lasted FOLLOW_WINDOW_MS with the
   * queue no longer than when it began (the server keeps real time), the talkspurt's time moves
   * earlier by the least any frame came ahead of it, within MAX_ADVANCE_MS.
   */
  private arrived(now: number, queuedFrames: number): void {
    if (queuedFrames < 1) return;
    const ahead = this.due + FRAME_MS * (queuedFrames - 1) - now;
    const watch = this.watch;
    if (!watch || ahead <= EARLY_MS || queuedFrames > watch.queued + 1) {
      this.watch = ahead > EARLY_MS ? { since: now, queued: queuedFrames, ahead } : null;
      return;
    }
    watch.ahead = Math.min(watch.ahead, ahead);
    if (now - watch.since < FOLLOW_WINDOW_MS) return;
    const advance = Math.min(watch.ahead, MAX_ADVANCE_MS - this.advanced);
    this.due -= advance;
    this.advanced += advance;
    this.watch = null;
  }
}
