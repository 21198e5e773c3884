import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MACHINE_DETECTION,
  GREETING_SHAPE,
  MachineClassifier,
  type GreetingShape,
  type MachineDetectionSettings,
  type MachineVerdict,
} from '../../../../src/media/pipeline/machine-classifier.js';
import { seededRandom } from '../../../support/prng.js';

/**
 * The classifier on synthetic 20 ms frames at 8 kHz: "speech" is a 300 Hz carrier whose
 * loudness wobbles at a syllable rate (never a steady pure tone), silence is the line's noise.
 */
const RATE = 8000;
const FRAME = 160;
const random = seededRandom(7);

type Part = ['speech' | 'noise' | 'nothing', number] | ['beep', number, number];

function noiseFrame(rms: number): Int16Array {
  return Int16Array.from({ length: FRAME }, () =>
    Math.round((random() * 2 - 1) * rms * Math.sqrt(3)),
  );
}

function speechFrame(index: number, noiseRms: number): Int16Array {
  const envelope = 0.7 + 0.3 * Math.sin((2 * Math.PI * 4 * index * FRAME) / RATE);
  const noise = noiseFrame(noiseRms);
  return Int16Array.from({ length: FRAME }, (_, i) => {
    const t = index * FRAME + i;
    const voice =
      Math.sin((2 * Math.PI * 300 * t) / RATE) + 0.6 * Math.sin((2 * Math.PI * 1150 * t) / RATE);
    return Math.round(5000 * envelope * voice + noise[i]!);
  });
}

function beepFrame(index: number, hz: number): Int16Array {
  return Int16Array.from({ length: FRAME }, (_, i) =>
    Math.round(8000 * Math.sin((2 * Math.PI * hz * (index * FRAME + i)) / RATE)),
  );
}

/** Feeds the parts (durations in ms), then the line's noise, until a verdict. */
function classify(
  parts: Part[],
  settings: Partial<MachineDetectionSettings> = {},
  noiseRms = 30,
  shape: GreetingShape = GREETING_SHAPE,
): MachineVerdict {
  const classifier = new MachineClassifier(
    { ...DEFAULT_MACHINE_DETECTION, ...settings },
    RATE,
    20,
    shape,
  );
  const frames: (Int16Array | null)[] = [];
  for (const part of parts) {
    for (let i = 0; i < part[1] / 20; i++) {
      const n = frames.length;
      if (part[0] === 'speech') frames.push(speechFrame(n, noiseRms));
      else if (part[0] === 'noise') frames.push(noiseFrame(noiseRms));
      else if (part[0] === 'beep') frames.push(beepFrame(n, part[2]));
      else frames.push(null);
    }
  }
  for (let i = 0; i < 5000; i++) {
    const verdict = classifier.tick(i < frames.length ? frames[i]! : noiseFrame(noiseRms));
    if (verdict) return verdict;
  }
  throw new Error('no verdict in 100 s');
}

/** No short-greeting rule: every greeting waits for all of machine_detection_silence. */
const NO_SHORT_GREETING: GreetingShape = { shortGreetingMs: 0, shortGreetingSilenceShare: 1 };

/**
 * The silence that ends a greeting of `spanMs` (first word's start to last word's end), as the
 * classifier hears it: in whole 20 ms frames.
 */
function silenceEnding(
  spanMs: number,
  silenceMs = DEFAULT_MACHINE_DETECTION.afterGreetingSilenceMs,
): number {
  const ms =
    spanMs <= GREETING_SHAPE.shortGreetingMs
      ? silenceMs * GREETING_SHAPE.shortGreetingSilenceShare
      : silenceMs;
  return Math.ceil(ms / 20) * 20;
}

/** Words of `ms` each, `gapMs` of noise between them. */
function words(count: number, ms: number, gapMs: number): Part[] {
  return Array.from({ length: count }, (_, i): Part[] =>
    i === 0
      ? [['speech', ms]]
      : [
          ['noise', gapMs],
          ['speech', ms],
        ],
  ).flat();
}

describe('MachineClassifier', () => {
  it('calls a short hello followed by silence a human, once the silence has lasted', () => {
    const verdict = classify([
      ['noise', 400],
      ['speech', 500],
    ]);
    expect(verdict).toMatchObject({ result: 'human', reason: 'silence-after-greeting', words: 1 });
    // 400 ms of line, 500 ms of hello, then the silence that ends a greeting that short.
    expect(verdict.afterMs).toBe(400 + 500 + silenceEnding(500));
    expect(verdict.firstAudioMs).toBe(0);
  });

  it('ends a short greeting after a share of machine_detection_silence, a longer one after all', () => {
    const shape = { shortGreetingMs: 1000, shortGreetingSilenceShare: 0.5 };
    const settings = { afterGreetingSilenceMs: 800 };
    // A 600 ms hello is over after 400 ms of silence.
    expect(classify([['speech', 600]], settings, 30, shape)).toMatchObject({
      result: 'human',
      afterMs: 600 + 400,
    });
    // Three words over 1500 ms need the whole 800 ms.
    expect(classify(words(3, 300, 300), settings, 30, shape)).toMatchObject({
      result: 'human',
      afterMs: 1500 + 800,
      words: 3,
    });
    // Without the rule the hello waits for all of it too.
    expect(classify([['speech', 600]], settings, 30, NO_SHORT_GREETING)).toMatchObject({
      afterMs: 600 + 800,
    });
  });

  it('calls a greeting with more speech than machine_detection_initial_greeting a machine', () => {
    const verdict = classify(words(6, 500, 150), { greetingMs: 1500, maximumWords: 10 });
    expect(verdict).toMatchObject({ result: 'machine', reason: 'long-greeting' });
    expect(verdict.afterMs).toBeLessThan(2500);
  });

  it('calls more words than machine_detection_maximum_words a machine', () => {
    const verdict = classify(words(6, 200, 150), { maximumWords: 3, greetingMs: 5000 });
    expect(verdict).toMatchObject({ result: 'machine', reason: 'too-many-words', words: 4 });
  });

  it('calls one utterance longer than machine_detection_maximum_speech_length a machine', () => {
    const verdict = classify([['speech', 4000]], {
      maximumWordMs: 1200,
      greetingMs: 5000,
    });
    expect(verdict).toMatchObject({ result: 'machine', reason: 'long-utterance', afterMs: 1200 });
  });

  it('takes machine_detection_silence as the pause that ends a greeting', () => {
    const hello = (silenceMs: number) =>
      classify(
        [
          ['speech', 400],
          ['noise', 900],
          ['speech', 400],
        ],
        { afterGreetingSilenceMs: silenceMs },
        30,
        NO_SHORT_GREETING,
      );
    // A 900 ms pause ends a greeting when 500 ms is enough, not when 1500 ms is needed.
    expect(hello(500)).toMatchObject({ result: 'human', afterMs: 900, words: 1 });
    expect(hello(1500)).toMatchObject({
      result: 'human',
      afterMs: 400 + 900 + 400 + 1500,
      words: 2,
    });
  });

  it('hears a voicemail beep of 440 to 2000 Hz as a machine, even after a short greeting', () => {
    for (const hz of [440, 1000, 2000]) {
      const verdict = classify(
        [
          ['noise', 300],
          ['beep', 500, hz],
        ],
        { afterGreetingSilenceMs: 2000 },
      );
      expect(verdict).toMatchObject({ result: 'machine', reason: 'beep' });
    }
  });

  it('gives up as unknown after machine_detection_initial_silence with no speech', () => {
    expect(classify([['noise', 9000]], { initialSilenceMs: 2000 })).toMatchObject({
      result: 'unknown',
      reason: 'initial-silence',
      afterMs: 2000,
      words: 0,
    });
  });

  it('waits for the first audio at most machine_detection_answer_time, then is unknown', () => {
    const classifier = new MachineClassifier(
      { ...DEFAULT_MACHINE_DETECTION, firstAudioMs: 800 },
      RATE,
    );
    let verdict: MachineVerdict | null = null;
    let ticks = 0;
    while (!verdict) {
      verdict = classifier.tick(null);
      ticks++;
    }
    expect(verdict).toMatchObject({ result: 'unknown', reason: 'no-audio', firstAudioMs: null });
    expect(ticks * 20).toBe(800);
    expect(classifier.tick(null)).toBeNull();
  });

  it('counts the analysis from the first audio, not from the answer', () => {
    const verdict = classify([
      ['nothing', 1000],
      ['noise', 200],
      ['speech', 500],
    ]);
    expect(verdict).toMatchObject({ result: 'human', firstAudioMs: 1000 });
    expect(verdict.afterMs).toBe(1000 + 200 + 500 + silenceEnding(500));
  });

  it('stops at machine_detection_time: a greeting still going is a machine, else unknown', () => {
    const settings = { totalMs: 2000, greetingMs: 5000, maximumWords: 10, maximumWordMs: 6000 };
    expect(classify(words(10, 300, 100), settings)).toMatchObject({
      result: 'machine',
      reason: 'still-talking',
      afterMs: 2000,
    });
    expect(
      classify(
        [
          ['noise', 1700],
          ['speech', 200],
        ],
        { ...settings, initialSilenceMs: 5000 },
      ),
    ).toMatchObject({ result: 'unknown', reason: 'time-limit', afterMs: 2000 });
  });

  it('follows the noise floor: a loud line is not one endless word', () => {
    // Noise at about -35 dBFS, well above a fixed -40 dBFS threshold.
    const verdict = classify(
      [
        ['noise', 600],
        ['speech', 500],
      ],
      {},
      580,
    );
    expect(verdict).toMatchObject({ result: 'human', reason: 'silence-after-greeting', words: 1 });
  });

  it('answers once: stop() after a verdict, and tick() after stop(), give nothing', () => {
    const classifier = new MachineClassifier(DEFAULT_MACHINE_DETECTION, RATE);
    expect(classifier.tick(noiseFrame(30))).toBeNull();
    expect(classifier.stop()).toMatchObject({
      result: 'unknown',
      reason: 'call-ended',
      afterMs: 20,
    });
    expect(classifier.stop()).toBeNull();
    expect(classifier.tick(noiseFrame(30))).toBeNull();
  });
});
