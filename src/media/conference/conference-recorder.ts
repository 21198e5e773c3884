import type { SampleRate } from '../codec/argument-checks.js';
import { Resampler } from '../codec/resampler.js';
import type { RecordingOutcome, RecordingSpec } from '../recording/recording-spec.js';
import { recordingOutcome, WavFileWriter } from '../recording/wav-file-writer.js';

const FRAME_MS = 20;

/**
 * Records a conference: on every tick of its mixer, the sum of every voice in the mix (muted
 * members left out, as they are for the others), one mono frame at the rate the mix ran at
 * when the recording began, written by the recordings' own WAV writer. A tick where no one
 * spoke is silence, so the file keeps real time; a mix that moves to another rate (a member of
 * another rate joined or left) is resampled to the file's.
 */
export class ConferenceRecorder {
  private frames = 0;
  private readonly startedAt = Date.now();
  private toFile: Resampler | null = null;
  private done: Promise<RecordingOutcome> | null = null;
  private resolveEnded!: (outcome: RecordingOutcome) => void;
  /** Settles when the recording has ended and its file is closed. */
  readonly ended = new Promise<RecordingOutcome>((resolve) => (this.resolveEnded = resolve));

  private constructor(
    private readonly spec: RecordingSpec,
    private readonly writer: WavFileWriter,
  ) {}

  /** Creates the file (throws when it cannot be made) for a mix at `rate`. */
  static async start(spec: RecordingSpec, rate: SampleRate): Promise<ConferenceRecorder> {
    return new ConferenceRecorder(spec, await WavFileWriter.create(spec.path, rate, 1));
  }

  get recordingId(): string {
    return this.spec.recordingId;
  }

  /** One tick of the mix: 20 ms at `rate`, or null when no one spoke. */
  take(mix: Int16Array | null, rate: SampleRate): void {
    if (this.done) return;
    const fileRate = this.writer.rate as SampleRate;
    if (rate === fileRate) this.toFile = null;
    else if (this.toFile?.fromRate !== rate) this.toFile = new Resampler(rate, fileRate);
    const frame = mix === null ? null : (this.toFile?.process(mix) ?? mix);
    this.writer.append(fitted(frame, (fileRate * FRAME_MS) / 1000));
    this.frames++;
    if (this.writer.failure) void this.stop('failed');
    else if (this.spec.maxMs !== undefined && this.frames * FRAME_MS >= this.spec.maxMs) {
      void this.stop('max-length');
    }
  }

  /** Ends the recording (asked to, or the conference is over); resolves with how it went. */
  stop(reason: RecordingOutcome['reason'] = 'stopped'): Promise<RecordingOutcome> {
    this.done ??= this.end(reason);
    return this.done;
  }

  private async end(reason: RecordingOutcome['reason']): Promise<RecordingOutcome> {
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

/** A frame of exactly `length` samples: silence for none, a resampler's short start padded. */
function fitted(frame: Int16Array | null, length: number): Int16Array {
  if (frame?.length === length) return frame;
  const out = new Int16Array(length);
  if (frame) out.set(frame.subarray(0, length), length - Math.min(length, frame.length));
  return out;
}
