import { spawn } from 'node:child_process';
import { convertRate } from '../codec/resampler.js';
import type { SampleRate } from '../codec/argument-checks.js';
import { PcmCache } from './pcm-cache.js';
import { readWav, type Pcm } from './wav.js';

export type SpeechVoice = 'MAN' | 'WOMAN';

/**
 * The languages of the voice document and the espeak-ng voice each is spoken with; `womanOnly`
 * where the document offers no MAN voice. espeak-ng has no voice of its own for some of these
 * (Australian and Indian English, Canadian and Mexican Spanish and French): the nearest is used.
 */
const LANGUAGES: Readonly<Record<string, { voice: string; womanOnly?: true }>> = {
  arb: { voice: 'ar', womanOnly: true },
  'cmn-CN': { voice: 'cmn', womanOnly: true },
  'da-DK': { voice: 'da' },
  'nl-NL': { voice: 'nl' },
  'en-AU': { voice: 'en-gb' },
  'en-GB': { voice: 'en-gb' },
  'en-US': { voice: 'en-us' },
  'fr-FR': { voice: 'fr-fr' },
  'de-DE': { voice: 'de' },
  'it-IT': { voice: 'it' },
  'ja-JP': { voice: 'ja' },
  'pt-BR': { voice: 'pt-br' },
  'pt-PT': { voice: 'pt' },
  'ru-RU': { voice: 'ru' },
  'es-ES': { voice: 'es' },
  'es-US': { voice: 'es-419' },
  'en-IN': { voice: 'en-gb', womanOnly: true },
  'fr-CA': { voice: 'fr-fr', womanOnly: true },
  'hi-IN': { voice: 'hi', womanOnly: true },
  'ko-KR': { voice: 'ko', womanOnly: true },
  'es-MX': { voice: 'es-419', womanOnly: true },
};

export const SPEECH_LANGUAGES: readonly string[] = Object.keys(LANGUAGES);

/** espeak-ng variants: a female and a male voice. */
const VARIANT: Readonly<Record<SpeechVoice, string>> = { WOMAN: 'f3', MAN: 'm3' };

export interface SpeechRendererOptions {
  /** The espeak-ng command (default `espeak-ng`). */
  command?: string;
  /** Octets of PCM kept in the cache before the least recently used renderings go. */
  cacheBytes?: number;
}

/**
 * Speak's text to speech through espeak-ng (Debian): each text, voice and language is
 * rendered once and kept, so a phrase repeated on many calls costs one process. The PCM comes
 * at espeak-ng's own rate; the call resamples it to its own.
 */
export class SpeechRenderer {
  private readonly cache: PcmCache;
  /** Renderings converted to a call's rate, so a prompt is resampled once per rate. */
  private readonly converted: PcmCache;

  constructor(private readonly options: SpeechRendererOptions = {}) {
    this.cache = new PcmCache(options.cacheBytes ?? 64 * 1024 * 1024);
    this.converted = new PcmCache(options.cacheBytes ?? 64 * 1024 * 1024);
  }

  /** Renderings started (cache misses). */
  get rendered(): number {
    return this.cache.misses;
  }

  /** Throws with a specific message when the voice document does not offer the pair. */
  static check(language: string, voice: SpeechVoice): void {
    const entry = LANGUAGES[language];
    if (!entry) {
      throw new Error(
        `Expected one of the languages ${SPEECH_LANGUAGES.join(', ')} but received ${language}`,
      );
    }
    if (voice !== 'MAN' && voice !== 'WOMAN')
      throw new Error(`Expected MAN or WOMAN but received ${String(voice)}`);
    if (voice === 'MAN' && entry.womanOnly) {
      throw new Error(`The voice MAN is not offered for ${language}; only WOMAN is`);
    }
  }

  /** Speaks `text`; with `ssml`, text is SSML content (what goes inside `<speak>`). */
  render(
    text: string,
    voice: SpeechVoice = 'WOMAN',
    language = 'en-US',
    ssml = false,
  ): Promise<Pcm> {
    try {
      SpeechRenderer.check(language, voice);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    if (text.trim() === '')
      return Promise.reject(new Error('Expected text to speak but received nothing'));
    return this.cache.get(speechKey(text, voice, language, ssml), () =>
      this.spawn(
        ssml ? `<speak>${text}</speak>` : text,
        `${LANGUAGES[language]!.voice}+${VARIANT[voice]}`,
        ssml,
      ),
    );
  }

  /** The rendering at a call's rate; each text, voice, language and rate is converted once. */
  renderAt(
    text: string,
    voice: SpeechVoice,
    language: string,
    rate: SampleRate,
    ssml = false,
  ): Promise<Pcm> {
    return this.converted.get(
      `${rate}\u0000${speechKey(text, voice, language, ssml)}`,
      async () => {
        const pcm = await this.render(text, voice, language, ssml);
        return { rate, samples: convertRate(pcm.samples, pcm.rate, rate) };
      },
    );
  }

  private spawn(text: string, voice: string, ssml: boolean): Promise<Pcm> {
    return new Promise((resolve, reject) => {
      // The text goes on stdin, never on the command line; -m reads SSML markup.
      const args = ['-v', voice, ...(ssml ? ['-m'] : []), '--stdout'];
      const child = spawn(this.options.command ?? 'espeak-ng', args, {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const out: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => (err += String(chunk)));
      child.on('error', (error) =>
        reject(new Error(`espeak-ng could not start: ${error.message}`)),
      );
      child.on('close', (code) => {
        if (code !== 0) {
          reject(new Error(`espeak-ng failed (exit ${code}): ${err.trim().slice(0, 200)}`));
          return;
        }
        try {
          resolve(readWav(Buffer.concat(out)));
        } catch (error) {
          reject(error as Error);
        }
      });
      child.stdin.end(text);
    });
  }
}

/** What names one rendering in the caches: the same text as SSML or as text differs. */
function speechKey(text: string, voice: SpeechVoice, language: string, ssml: boolean): string {
  return `${language}\u0000${voice}\u0000${ssml ? 'ssml' : 'text'}\u0000${text}`;
}
