import type { MessagePort } from 'node:worker_threads';
import type { SampleRate } from '../codec/argument-checks.js';
import type { MediaSession } from '../pipeline/media-session.js';
import type { AudioTap } from '../pipeline/session-spec.js';
import { PushedSource, type PlayoutSource } from '../playout/playout-source.js';
import type { MemberSession } from './conference-mixer.js';

/** More than this much of the mix (100 ms) waiting to be played to a member: start afresh. */
const MAX_QUEUED_MS = 100;
/** The frames of a member's voice the mixer keeps waiting (MAX_WAITING_FRAMES there). */
const MIXER_WAITING = 3;

/** Ticks (200 ms) a standing queue of frames may last before one frame of it is dropped. */
const STANDING_TICKS = 10;

/**
 * Keeps a link's queues short. The two workers' clocks tick at the same pace, so a frame that
 * waits at every tick (one worker held up, then catching up in a burst) would wait for good,
 * adding its 20 ms to the delay; once frames have waited after every tick for STANDING_TICKS
 * ticks, one is dropped.
 */
class StandingQueue {
  private standing = 0;

  /** Told after each tick whether frames still wait; says whether to drop one. */
  afterTick(waiting: boolean): boolean {
    this.standing = waiting ? this.standing + 1 : 0;
    if (this.standing < STANDING_TICKS) return false;
    this.standing = 0;
    return true;
  }
}

/** Sends a frame over a port, moved rather than copied (a tap's frame may be a view). */
function post(port: MessagePort, frame: Int16Array): void {
  const own = frame.slice();
  port.postMessage(own, [own.buffer]);
}

/**
 * The member's end of a link between two media workers: a conference is mixed on one worker,
 * and a member whose leg runs on another reaches it through a MessagePort. Once the other end
 * says it is there (an empty frame), every frame the leg hears goes over the port as it is
 * heard; every frame of the mix that comes back is played into the leg at its next tick.
 * Either end closing the port (the member leaves, its leg or the other worker goes away) ends
 * the link on both.
 */
export class MemberLink {
  private readonly heard = new PushedSource();
  private readonly removeTap: () => void;
  private readonly unpace: () => void;
  private readonly queue = new StandingQueue();
  /** The conference's end is listening: frames sent before would wait, and add delay. */
  private joined = false;
  private closed = false;

  constructor(
    private readonly session: MediaSession,
    private readonly port: MessagePort,
    onClosed: () => void,
  ) {
    // As the mixer plays into a member on its own worker: without ready(), on the leg's ticks.
    void session.play({ read: (samples) => this.read(samples) }, 'mix');
    // A stream's playAudio on the member goes out on the ticks, in step with the mix.
    this.unpace = session.paceByTicks();
    this.removeTap = session.addTap((frame) => {
      if (this.joined) post(port, frame);
    });
    port.on('message', (frame: Int16Array) => {
      if (this.closed) return;
      this.joined = true;
      if (this.heard.queued > (session.rate * MAX_QUEUED_MS) / 1000) this.heard.clear();
      this.heard.push(frame);
    });
    port.on('close', () => {
      this.close();
      onClosed();
    });
  }

  get rate(): SampleRate {
    return this.session.rate;
  }

  /** A frame of the mix, on the leg's tick. */
  private read(samples: number): Int16Array | null {
    const frame = this.heard.read(samples);
    if (this.queue.afterTick(this.heard.queued >= samples)) this.heard.read(samples);
    return frame;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.removeTap();
    this.unpace();
    this.heard.clear();
    this.heard.end();
    this.port.close();
  }
}

/**
 * The conference's end of a link: to the mixer, a member like any other (MemberSession). The
 * member's frames arrive over the port and go to the mixer's tap as they come; what the mixer
 * plays to the member is read on each tick of this worker's clock, just after the mix (the
 * mixer is made before any linked member of its conference, and the clock ticks in the order
 * its tickers were added), and sent back over the port.
 */
export class LinkedMember implements MemberSession {
  private readonly taps = new Set<AudioTap>();
  private source: PlayoutSource | null = null;
  private finish: ((completed: boolean) => void) | null = null;
  private readonly stopTicking: () => void;
  private readonly queue = new StandingQueue();
  /**
   * Frames handed to the mixer and not mixed yet: it mixes one a tick and keeps at most
   * MIXER_WAITING, so this is known without asking it.
   */
  private waiting = 0;
  /** Frames to drop as they arrive, to shorten a standing queue. */
  private dropping = 0;
  private closed = false;

  constructor(
    readonly rate: SampleRate,
    private readonly port: MessagePort,
    clock: { add(tick: () => void): () => void },
    onClosed: () => void,
  ) {
    port.on('message', (frame: Int16Array) => {
      if (this.dropping > 0) {
        this.dropping--;
        return;
      }
      this.waiting = Math.min(this.waiting + 1, MIXER_WAITING);
      for (const tap of this.taps) tap(frame);
    });
    port.on('close', () => {
      this.close();
      onClosed();
    });
    this.stopTicking = clock.add(() => this.afterMix());
    // The member's end sends nothing until told this end listens.
    port.postMessage(new Int16Array(0));
  }

  addTap(tap: AudioTap): () => void {
    this.taps.add(tap);
    return () => this.taps.delete(tap);
  }

  /** The member's leg is paced by its own worker's end of the link (MemberLink). */
  paceByTicks(): () => void {
    return () => {};
  }

  play(source: PlayoutSource): Promise<boolean> {
    this.finish?.(false);
    this.source = source;
    return new Promise((resolve) => (this.finish = resolve));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopTicking();
    this.taps.clear();
    this.finish?.(false);
    this.finish = null;
    this.port.close();
  }

  private afterMix(): void {
    this.waiting = Math.max(0, this.waiting - 1);
    if (this.queue.afterTick(this.waiting > 0)) this.dropping++;
    this.sendHeard();
  }

  private sendHeard(): void {
    if (this.source === null) return;
    const frame = this.source.read(this.rate / 50);
    if (frame === null) {
      this.source = null;
      this.finish?.(true);
      this.finish = null;
      return;
    }
    if (frame.length > 0) post(this.port, frame);
  }
}
