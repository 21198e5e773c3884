/** Speak voices. */
export const SPEAK_VOICES = ['MAN', 'WOMAN'] as const;
export type SpeakVoice = (typeof SPEAK_VOICES)[number];

/**
 * Speak languages and the voices each offers, from the voice document's language list (the same
 * list the Speak REST endpoint accepts).
 */
export const SPEAK_LANGUAGE_VOICES = {
  arb: ['WOMAN'],
  'cmn-CN': ['WOMAN'],
  'da-DK': ['WOMAN', 'MAN'],
  'nl-NL': ['WOMAN', 'MAN'],
  'en-AU': ['WOMAN', 'MAN'],
  'en-GB': ['WOMAN', 'MAN'],
  'en-US': ['WOMAN', 'MAN'],
  'fr-FR': ['WOMAN', 'MAN'],
  'de-DE': ['WOMAN', 'MAN'],
  'it-IT': ['WOMAN', 'MAN'],
  'ja-JP': ['WOMAN', 'MAN'],
  'pt-BR': ['WOMAN', 'MAN'],
  'pt-PT': ['WOMAN', 'MAN'],
  'ru-RU': ['WOMAN', 'MAN'],
  'es-ES': ['WOMAN', 'MAN'],
  'es-US': ['WOMAN', 'MAN'],
  'en-IN': ['WOMAN'],
  'fr-CA': ['WOMAN'],
  'hi-IN': ['WOMAN'],
  'ko-KR': ['WOMAN'],
  'es-MX': ['WOMAN'],
} as const satisfies Record<string, readonly SpeakVoice[]>;

export type SpeakLanguage = keyof typeof SPEAK_LANGUAGE_VOICES;

export function isSpeakLanguage(value: string): value is SpeakLanguage {
  return Object.hasOwn(SPEAK_LANGUAGE_VOICES, value);
}

export function languageHasVoice(language: SpeakLanguage, voice: SpeakVoice): boolean {
  return (SPEAK_LANGUAGE_VOICES[language] as readonly SpeakVoice[]).includes(voice);
}
