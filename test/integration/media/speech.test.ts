import { describe, expect, it } from 'vitest';
import {
  SPEECH_LANGUAGES,
  SpeechRenderer,
  type SpeechVoice,
} from '../../../src/media/sources/speech.js';

/** Speak through the real espeak-ng: audio for every language and voice, rendered once. */
const rmsDbfs = (s: Int16Array): number => {
  let sum = 0;
  for (const v of s) sum += v * v;
  return 20 * Math.log10(Math.sqrt(sum / s.length) / 32768);
};

/** The fundamental of the loudest 100 ms, by autocorrelation between 80 and 400 Hz. */
function pitchHz(samples: Int16Array, rate: number): number {
  const window = Math.round(rate / 10);
  let best = 0;
  let bestEnergy = -1;
  for (let at = 0; at + window < samples.length; at += window / 2) {
    let e = 0;
    for (let i = at; i < at + window; i++) e += samples[i]! * samples[i]!;
    if (e > bestEnergy) [bestEnergy, best] = [e, at];
  }
  let bestLag = 0;
  let bestScore = -Infinity;
  for (let lag = Math.round(rate / 400); lag <= Math.round(rate / 80); lag++) {
    let score = 0;
    for (let i = best; i < best + window; i++) score += samples[i]! * samples[i + lag]!;
    if (score > bestScore) [bestScore, bestLag] = [score, lag];
  }
  return rate / bestLag;
}

const WOMAN_ONLY = new Set(['arb', 'cmn-CN', 'en-IN', 'fr-CA', 'hi-IN', 'ko-KR', 'es-MX']);

describe('SpeechRenderer on espeak-ng', () => {
  const renderer = new SpeechRenderer();

  it('speaks SSML markup as markup: a break is a pause, not a word', async () => {
    /** The longest run of 10 ms windows under -50 dBFS between the first and last sound. */
    const longestPauseMs = (pcm: { rate: number; samples: Int16Array }) => {
      const window = pcm.rate / 100;
      const quiet: boolean[] = [];
      for (let at = 0; at + window <= pcm.samples.length; at += window)
        quiet.push(rmsDbfs(pcm.samples.subarray(at, at + window)) < -50);
      const first = quiet.indexOf(false);
      const last = quiet.lastIndexOf(false);
      let longest = 0;
      let run = 0;
      for (let i = first; i <= last; i++) {
        run = quiet[i] ? run + 1 : 0;
        longest = Math.max(longest, run);
      }
      return longest * 10;
    };
    const marked = await renderer.render(
      'Hello <break time="1500ms"/> world',
      'WOMAN',
      'en-US',
      true,
    );
    const plain = await renderer.render('Hello world', 'WOMAN', 'en-US');
    expect(longestPauseMs(marked)).toBeGreaterThanOrEqual(1300);
    expect(longestPauseMs(plain)).toBeLessThan(500);
    // Read as plain text, the markup would be spoken (or dropped) without the pause.
    const unread = await renderer.render('Hello <break time="1500ms"/> world', 'WOMAN', 'en-US');
    expect(longestPauseMs(unread)).toBeLessThan(500);
  });

  it('speaks every language of the voice document in each voice it offers', async () => {
    const pairs: [string, SpeechVoice][] = SPEECH_LANGUAGES.flatMap((language) =>
      WOMAN_ONLY.has(language)
        ? [[language, 'WOMAN'] as [string, SpeechVoice]]
        : (['WOMAN', 'MAN'] as const).map((v) => [language, v] as [string, SpeechVoice]),
    );
    expect(pairs).toHaveLength(7 + 14 * 2);
    for (const [language, voice] of pairs) {
      const pcm = await renderer.render('one two three', voice, language);
      expect(pcm.rate, `${language} ${voice}`).toBe(22050);
      expect(pcm.samples.length, `${language} ${voice}`).toBeGreaterThan(22050 / 4);
      expect(rmsDbfs(pcm.samples), `${language} ${voice}`).toBeGreaterThan(-35);
    }
  }, 60_000);

  it('speaks WOMAN higher than MAN', async () => {
    const woman = await renderer.render('Hello, thank you for calling.', 'WOMAN', 'en-US');
    const man = await renderer.render('Hello, thank you for calling.', 'MAN', 'en-US');
    expect(pitchHz(woman.samples, woman.rate)).toBeGreaterThan(
      pitchHz(man.samples, man.rate) * 1.2,
    );
  });

  it('renders a text, voice and language once, however often it is asked for', async () => {
    const fresh = new SpeechRenderer();
    const [a, b] = await Promise.all([
      fresh.render('Please hold.', 'WOMAN', 'en-GB'),
      fresh.render('Please hold.', 'WOMAN', 'en-GB'),
    ]);
    const c = await fresh.render('Please hold.', 'WOMAN', 'en-GB');
    expect(fresh.rendered).toBe(1);
    expect(b).toBe(a);
    expect(c).toBe(a);
    await fresh.render('Please hold.', 'MAN', 'en-GB');
    expect(fresh.rendered).toBe(2);
  });

  it('converts a rendering to a call rate once per rate, keeping its length', async () => {
    const fresh = new SpeechRenderer();
    const raw = await fresh.render('Thank you for calling.', 'WOMAN', 'en-US');
    const [a, b] = await Promise.all([
      fresh.renderAt('Thank you for calling.', 'WOMAN', 'en-US', 8000),
      fresh.renderAt('Thank you for calling.', 'WOMAN', 'en-US', 8000),
    ]);
    expect(b).toBe(a);
    expect(await fresh.renderAt('Thank you for calling.', 'WOMAN', 'en-US', 8000)).toBe(a);
    expect(a.rate).toBe(8000);
    expect(a.samples.length).toBe(Math.floor((raw.samples.length * 8000) / raw.rate));
    const wide = await fresh.renderAt('Thank you for calling.', 'WOMAN', 'en-US', 16000);
    expect(wide.rate).toBe(16000);
    expect(wide.samples.length).toBe(Math.floor((raw.samples.length * 16000) / raw.rate));
    // The same speech at both rates: its loudness survives each conversion.
    expect(Math.abs(rmsDbfs(a.samples) - rmsDbfs(raw.samples))).toBeLessThan(1.5);
    expect(Math.abs(rmsDbfs(wide.samples) - rmsDbfs(raw.samples))).toBeLessThan(1.5);
    expect(fresh.rendered).toBe(1);
  });

  it('keeps the cache within its size, dropping the least recently used', async () => {
    const small = new SpeechRenderer({ cacheBytes: 1 });
    await small.render('first', 'WOMAN', 'en-US');
    await small.render('second', 'WOMAN', 'en-US');
    await small.render('first', 'WOMAN', 'en-US');
    expect(small.rendered).toBe(3);
  });

  it('refuses what the voice document does not offer, with specific messages', async () => {
    await expect(renderer.render('hi', 'MAN', 'en-IN')).rejects.toThrow(
      'The voice MAN is not offered for en-IN; only WOMAN is',
    );
    await expect(renderer.render('hi', 'WOMAN', 'xx-YY')).rejects.toThrow(
      /^Expected one of the languages arb, cmn-CN, .* but received xx-YY$/,
    );
    await expect(renderer.render('  ', 'WOMAN', 'en-US')).rejects.toThrow(
      'Expected text to speak but received nothing',
    );
  });

  it('takes the text as text, never as command-line options', async () => {
    const pcm = await renderer.render('--version; $(rm -rf /) `x`', 'WOMAN', 'en-US');
    expect(pcm.samples.length).toBeGreaterThan(0);
  });
});
