import type { FrameClock } from '../playout/frame-clock.js';
import type { MediaSession } from '../pipeline/media-session.js';
import { SilenceWatch } from '../pipeline/silence-watch.js';
import type { RecordingOutcome, RecordingSpec } from './recording-spec.js';
import { recordingOutcome, WavFileWriter } from './wav-file-writer.js';

/** Frames a side may run ahead of the ticks (a pacer's catch-up burst) before the oldest go. */
const MAX_QUEUED_FRAMES = 5;
const FRAME_MS = 20;

/** One side's frames as they come, taken one per tick; a tick with none is silence. */
class FrameQueue {
  private readonly frames: Int16Array[] = [];

  push(frame: Int16Array): void {
    if (this.frames.length >= MAX_QUEUED_FRAMES) this.frames.shift();
    // A copy: taps hand out buffers their owners reuse.
    this.frames.push(frame.slice());
  }

  take(): Int16Array | null {
    return this.frames.shift() ?? null;
  }
}

/**
 * Records one leg as its audio passes: what the party says (the frames the leg hears) and
 * what it hears (the frames the leg plays out, which while its RTP is relayed undecoded from
 * a bridged leg are what that leg hears). Mono mixes the two; stereo puts the party on the left
 * channel and what it hears on the right. One frame is written per tick of the worker's clock,
 * so the file keeps real time and its duration is the ticks it ran.
 */
export class CallRecorder {
  private readonly said = new FrameQueue();
  private readonly heard = new FrameQueue();
  private readonly untaps: (() => void)[] = [];
  private readonly silence: SilenceWatch | null;
  private readonly frameSamples: number;
  private frames = 0;
  private readonly startedAt = Date.now();
  private stopTicking: () => void = () => {};
  private done: Promise<RecordingOutcome> | null = null;
  private resolveEnded!: (outcome: RecordingOutcome) => void;
  /** Settles when the recording has ended and its file is closed. */
  readonly ended = new Promise<RecordingOutcome>((resolve) => (this.resolveEnded = resolve));

  private constructor(
    private readonly spec: RecordingSpec,
    session: MediaSession,
    private readonly writer: WavFileWriter,
  ) {
    this.frameSamples = (session.rate * FRAME_MS) / 1000;
    this.silence = spec.silenceMs ? new SilenceWatch(spec.silenceMs, Infinity) : null;
  }

  /** Starts recording `session` into a new file at spec.path (throws when the file cannot be made). */
  static async start(
    spec: RecordingSpec,
    session: MediaSession,
    clock: FrameClock,
  ): Promise<CallRecorder> {
    const writer = await WavFileWriter.create(spec.path, session.rate, spec.channels);
    const recorder = new CallRecorder(spec, session, writer);
    recorder.untaps.push(
      session.addTap((frame) => recorder.said.push(frame)),
      session.addOutboundTap((frame) => recorder.heard.push(frame)),
    );
    // Added after the session's own tick: each tick here finds that tick's frames.
    recorder.stopTicking = clock.add(() => recorder.tick());
    return recorder;
  }

  get recordingId(): string {
    return this.spec.recordingId;
  }

  /** Ends the recording (asked to, or its leg is closing); resolves with how it went. */
  stop(reason: RecordingOutcome['reason'] = 'stopped'): Promise<RecordingOutcome> {
    this.done ??= this.end(reason);
    return this.done;
  }

  private tick(): void {
    if (this.done) return;
    const said = this.said.take();
    this.writer.append(this.frameOf(said, this.heard.take()));
    this.frames++;
    if (this.writer.failure) {
      void this.stop('failed');
      return;
    }
    if (this.spec.maxMs !== undefined && this.frames * FRAME_MS >= this.spec.maxMs) {
      void this.stop('max-length');
      return;
    }
    if (this.silence?.tick(said)) void this.stop('silence');
  }

  /** One frame of the file: the two sides mixed (mono) or side by side (stereo). */
  private frameOf(said: Int16Array | null, heard: Int16Array | null): Int16Array {
    const n = this.frameSamples;
    if (this.spec.channels === 1) {
      return mixed(said, heard) ?? new Int16Array(n);
    }
    const out = new Int16Array(n * 2);
    for (let i = 0; i < n; i++) {
      out[2 * i] = said?.[i] ?? 0;
      out[2 * i + 1] = heard?.[i] ?? 0;
    }
    return out;
  }

  private async end(reason: RecordingOutcome['reason']): Promise<RecordingOutcome> {
    this.stopTicking();
    for (const untap of this.untaps) untap();
    const failure = await this.writer.finish();
    const outcome = recordingOutcome(
      this.spec.recordingId,
      this.writer,
      { frames: this.frames, startedAt: this.startedAt },
      reason,
      failure,
    );
    this.resolveEnded(outcome);
    return outcome;
  }
}

/** Two frames summed with saturation; either may be missing. */
function mixed(a: Int16Array | null, b: Int16Array | null): Int16Array | null {
  if (!a || !b) return a ?? b;
  const out = new Int16Array(Math.max(a.length, b.length));
  for (let i = 0; i < out.length; i++) {
    out[i] = Math.max(-32768, Math.min(32767, (a[i] ?? 0) + (b[i] ?? 0)));
  }
  return out;
}
