import { BeepWatch } from './beep-watch.js';
import { frameEnergy } from './frame-level.js';

/**
 * The limits of one machine detection, all durations in milliseconds (the machine_detection_*
 * parameters of POST Call/, or the gateway's defaults).
 */
export interface MachineDetectionSettings {
  /** machine_detection_time: the longest analysis, counted from the first audio. */
  totalMs: number;
  /** machine_detection_answer_time: the longest wait, from the answer, for the first audio. */
  firstAudioMs: number;
  /** machine_detection_initial_silence: silence before any speech that gives up (unknown). */
  initialSilenceMs: number;
  /** machine_detection_initial_greeting: speech in the greeting beyond this means machine. */
  greetingMs: number;
  /** machine_detection_silence: silence after a greeting shorter than that means human. */
  afterGreetingSilenceMs: number;
  /** machine_detection_maximum_words: more words than this means machine. */
  maximumWords: number;
  /** machine_detection_maximum_speech_length: one utterance longer than this means machine. */
  maximumWordMs: number;
}

/**
 * The gateway's defaults, tuned on the tuning third of the bench/amd corpus with
 * bench/amd/tune.ts (docs/calls-and-media.md, Machine detection).
 */
export const DEFAULT_MACHINE_DETECTION: MachineDetectionSettings = {
  totalMs: 5000,
  firstAudioMs: 5000,
  initialSilenceMs: 3000,
  greetingMs: 2200,
  afterGreetingSilenceMs: 700,
  maximumWords: 8,
  maximumWordMs: 3000,
};

/**
 * A timing rule beyond the public parameters: a short greeting ("Hello?") followed by silence
 * is a person waiting for an answer, so it needs less of machine_detection_silence than a long
 * one, where a pause may be a recording drawing breath. Not settable through the API;
 * bench/amd/tune.ts varies it to measure what it is worth.
 */
export interface GreetingShape {
  /** A greeting no longer than this (0: no such rule), first word's start to last word's end... */
  shortGreetingMs: number;
  /** ...is over (human) after this share of machine_detection_silence. */
  shortGreetingSilenceShare: number;
}

/**
 * The gateway's rule, picked by bench/amd/tune.ts with the public defaults: up to 1.5 s of
 * greeting, 70 % of machine_detection_silence (490 ms at 700). A small gain (the median
 * decision 60 ms sooner on the tuning part) for a small cost: a voicemail that pauses that
 * long early on is called a human (1 more of the tuning part's 36; at 50 %, 8 more).
 */
export const GREETING_SHAPE: GreetingShape = {
  shortGreetingMs: 1500,
  shortGreetingSilenceShare: 0.7,
};

export type MachineResult = 'machine' | 'human' | 'unknown';

/** Why the classifier decided as it did. */
export type MachineReason =
  | 'beep'
  | 'long-greeting'
  | 'too-many-words'
  | 'long-utterance'
  | 'silence-after-greeting'
  | 'initial-silence'
  | 'no-audio'
  | 'still-talking'
  | 'time-limit'
  | 'call-ended';

export interface MachineVerdict {
  result: MachineResult;
  reason: MachineReason;
  /** From the start of detection (the answer) to the decision. */
  afterMs: number;
  /** From the answer to the first audio; null when none came. */
  firstAudioMs: number | null;
  /** Words heard before the decision. */
  words: number;
}

/** A voiced run this long is a word; shorter ones are clicks. */
const MINIMUM_WORD_MS = 100;
/** Silence this long ends a word. */
const BETWEEN_WORDS_MS = 60;
/** Speech must stand this far above the line's noise floor (x3.2 in RMS, +10 dB). */
const OVER_NOISE = 3.2;
/** Bounds of the speech threshold in RMS: about -45 dBFS and -26 dBFS. */
const MIN_THRESHOLD_RMS = 185;
const MAX_THRESHOLD_RMS = 1650;
/**
 * Frames of one steady tone that make a voicemail beep here (260 ms): longer than the Wait
 * beep's 160 ms, as a sung vowel of synthetic or flat speech can hold one pitch that long.
 */
const BEEP_FRAMES = 13;
/** Speech in a greeting still going at the time limit that makes it a machine's. */
const STILL_TALKING_MS = 1000;
/** The noise floor estimate climbs back this much per frame (about 2 dB a second at 20 ms). */
const FLOOR_RISE = 1.012;

/**
 * Answering-machine detection by energy and word timing, after the published description of
 * Asterisk's app_amd: each 20 ms frame is voiced or silent by its energy against a threshold;
 * voiced runs make words, silences separate them. A greeting that is too long, too wordy or
 * holds one utterance too long is a machine; a greeting followed by silence is a human (a short
 * one sooner, GREETING_SHAPE); silence from the start, or no decision in the time, is unknown.
 * A voicemail beep heard at any point is a machine. Unlike app_amd, whose silence threshold is fixed, the threshold
 * follows the line's noise floor (the quietest frames so far), so noisy lines do not read as
 * one endless word.
 *
 * Pure: fed one frame per 20 ms tick (null when no audio arrived), it returns the verdict
 * once, then null for ever after.
 */
export class MachineClassifier {
  private elapsedMs = 0;
  private audioMs: number | null = null;
  private analysedMs = 0;
  private noiseRms: number | null = null;
  private silenceMs = 0;
  private voicedRunMs = 0;
  private greetingVoiceMs = 0;
  /** analysedMs at the start of the first word, and at the end of the latest voiced frame. */
  private greetingStartMs: number | null = null;
  private lastVoiceMs = 0;
  private inWord = false;
  private words = 0;
  private decided = false;
  private readonly beep: BeepWatch;

  constructor(
    private readonly settings: MachineDetectionSettings,
    rate: number,
    private readonly frameMs = 20,
    private readonly shape: GreetingShape = GREETING_SHAPE,
  ) {
    this.beep = new BeepWatch(Infinity, rate, frameMs, BEEP_FRAMES);
  }

  /** The verdict once decided (returned once), else null. */
  tick(frame: Int16Array | null): MachineVerdict | null {
    if (this.decided) return null;
    this.elapsedMs += this.frameMs;
    if (this.audioMs === null) {
      if (frame === null) {
        return this.elapsedMs >= this.settings.firstAudioMs
          ? this.decide('unknown', 'no-audio')
          : null;
      }
      this.audioMs = this.elapsedMs - this.frameMs;
    }
    this.analysedMs += this.frameMs;
    if (frame !== null && this.beep.tick(frame) === true) return this.decide('machine', 'beep');
    const verdict = this.voiced(frame) ? this.onVoice() : this.onSilence();
    if (verdict) return verdict;
    if (this.analysedMs >= this.settings.totalMs) {
      // Still in a greeting when the time is up: people pause, recordings run on.
      const talking = this.words > 0 && this.silenceMs < this.settings.afterGreetingSilenceMs;
      return talking && this.greetingVoiceMs >= STILL_TALKING_MS
        ? this.decide('machine', 'still-talking')
        : this.decide('unknown', 'time-limit');
    }
    return null;
  }

  /** Ends the detection early (the call ended): unknown. */
  stop(reason: MachineReason = 'call-ended'): MachineVerdict | null {
    return this.decided ? null : this.decide('unknown', reason);
  }

  private voiced(frame: Int16Array | null): boolean {
    if (frame === null || frame.length === 0) return false;
    const rms = Math.sqrt(frameEnergy(frame) / frame.length);
    const floor = this.noiseRms === null ? rms : Math.min(rms, this.noiseRms * FLOOR_RISE);
    const threshold = Math.min(
      MAX_THRESHOLD_RMS,
      Math.max(MIN_THRESHOLD_RMS, (this.noiseRms ?? floor) * OVER_NOISE),
    );
    this.noiseRms = floor;
    return rms >= threshold;
  }

  private onVoice(): MachineVerdict | null {
    const { settings } = this;
    this.silenceMs = 0;
    this.voicedRunMs += this.frameMs;
    this.lastVoiceMs = this.analysedMs;
    if (this.words > 0 || this.voicedRunMs >= MINIMUM_WORD_MS) {
      this.greetingVoiceMs += this.frameMs;
    }
    if (!this.inWord && this.voicedRunMs >= MINIMUM_WORD_MS) {
      this.inWord = true;
      this.words++;
      // The frames of the word before it counted as one.
      if (this.words === 1) {
        this.greetingVoiceMs = this.voicedRunMs;
        this.greetingStartMs = this.analysedMs - this.voicedRunMs;
      }
      if (this.words > settings.maximumWords) return this.decide('machine', 'too-many-words');
    }
    if (this.voicedRunMs >= settings.maximumWordMs) return this.decide('machine', 'long-utterance');
    if (this.words > 0 && this.greetingVoiceMs >= settings.greetingMs) {
      return this.decide('machine', 'long-greeting');
    }
    return null;
  }

  private onSilence(): MachineVerdict | null {
    const { settings } = this;
    this.silenceMs += this.frameMs;
    if (this.silenceMs >= BETWEEN_WORDS_MS) {
      this.voicedRunMs = 0;
      this.inWord = false;
    }
    if (this.words === 0) {
      return this.silenceMs >= settings.initialSilenceMs
        ? this.decide('unknown', 'initial-silence')
        : null;
    }
    return this.silenceMs >= this.greetingEndSilenceMs()
      ? this.decide('human', 'silence-after-greeting')
      : null;
  }

  /** The silence that ends the greeting so far: a short one is over sooner. */
  private greetingEndSilenceMs(): number {
    const { settings, shape } = this;
    const spanMs = this.lastVoiceMs - (this.greetingStartMs ?? this.lastVoiceMs);
    return spanMs <= shape.shortGreetingMs
      ? settings.afterGreetingSilenceMs * shape.shortGreetingSilenceShare
      : settings.afterGreetingSilenceMs;
  }

  private decide(result: MachineResult, reason: MachineReason): MachineVerdict {
    this.decided = true;
    return {
      result,
      reason,
      afterMs: this.elapsedMs,
      firstAudioMs: this.audioMs,
      words: this.words,
    };
  }
}
