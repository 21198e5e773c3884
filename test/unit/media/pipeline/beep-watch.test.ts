import { describe, expect, it } from 'vitest';
import { BeepWatch, pureToneHz } from '../../../../src/media/pipeline/beep-watch.js';
import { chunks, tone } from '../../../support/signal.js';

/** 20 ms frames of `seconds` of a signal at 8 kHz. */
const framesOf = (pcm: Int16Array) => [...chunks(pcm, [160])].filter((f) => f.length === 160);
const sum = (...parts: Int16Array[]) =>
  Int16Array.from(parts[0]!, (_, i) => parts.reduce((s, p) => s + p[i]!, 0));

/** A voice: a 140 Hz glottal pitch with harmonics, its pitch sliding as speech does. */
function voice(seconds: number): Int16Array {
  const n = Math.round(8000 * seconds);
  return Int16Array.from({ length: n }, (_, i) => {
    const f0 = 120 + 40 * Math.sin((2 * Math.PI * i) / 4000);
    let s = 0;
    for (let h = 1; h <= 12; h++) s += (900 / h) * Math.sin((2 * Math.PI * f0 * h * i) / 8000);
    return Math.round(s);
  });
}

function run(watch: BeepWatch, frames: (Int16Array | null)[]) {
  for (let i = 0; i < frames.length; i++) {
    const verdict = watch.tick(frames[i]!);
    if (verdict !== null) return { verdict, frames: i + 1 };
  }
  return { verdict: null, frames: frames.length };
}

describe('BeepWatch', () => {
  it.each([440, 1000, 1400, 2000])('hears a %i Hz voicemail beep after a greeting', (hz) => {
    const frames = [...framesOf(voice(2)), ...framesOf(tone(8000, hz, 0.5, 8000))];
    // 100 frames of greeting, then the beep: heard 8 frames (160 ms) into it.
    expect(run(new BeepWatch(10_000, 8000), frames)).toEqual({ verdict: true, frames: 108 });
  });

  it('hears nothing in speech, DTMF, noise or silence, and gives up at maxMs', () => {
    const dtmf = sum(tone(8000, 697, 1, 6000), tone(8000, 1209, 1, 6000));
    const noise = Int16Array.from({ length: 8000 }, (_, i) => ((i * 7919) % 4001) - 2000);
    const frames = [
      ...framesOf(voice(3)),
      ...framesOf(dtmf),
      ...framesOf(noise),
      ...Array<null>(50).fill(null),
    ];
    expect(frames).toHaveLength(300);
    expect(run(new BeepWatch(6000, 8000), frames)).toEqual({ verdict: false, frames: 300 });
  });

  it('wants the tone steady for 160 ms: a shorter one is not a beep', () => {
    const blip = framesOf(tone(8000, 1000, 0.1, 8000));
    const frames = [...blip, ...Array<null>(10).fill(null), ...blip];
    expect(run(new BeepWatch(400, 8000), frames)).toEqual({ verdict: false, frames: 20 });
  });

  it('reads a pure tone at 16 kHz too, and nothing below -40 dBFS', () => {
    expect(pureToneHz(tone(16000, 1000, 0.02, 8000), 16000)).toBe(1000);
    expect(pureToneHz(tone(8000, 1000, 0.02, 200), 8000)).toBeNull();
  });
});
