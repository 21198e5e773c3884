import type { PlayInstruction, SpeakInstruction, WaitInstruction } from './answer-document.js';
import { ANSWER_XML_DEFAULTS, ANSWER_XML_RANGES } from './answer-xml-defaults.js';
import { AnswerXmlError } from './answer-xml-error.js';
import { ElementReader, HTTP_PROTOCOLS } from './element-reader.js';
import { readSpeakContent } from './speak-ssml.js';
import { SPEAK_VOICES, isSpeakLanguage, languageHasVoice } from './speak-voices.js';
import type { XmlElement } from './xml-tree.js';

export function readSpeak(element: XmlElement): SpeakInstruction {
  const defaults = ANSWER_XML_DEFAULTS.Speak;
  const reader = new ElementReader(element, ['voice', 'language', 'loop']);
  const voice = reader.oneOf('voice', SPEAK_VOICES, defaults.voice);
  const language = reader.string('language') ?? defaults.language;
  if (!isSpeakLanguage(language)) {
    throw new AnswerXmlError('Speak', `language "${language}" is not supported`, 'language');
  }
  if (!languageHasVoice(language, voice)) {
    throw new AnswerXmlError(
      'Speak',
      `voice ${voice} is not available for language ${language} (WOMAN only)`,
      'voice',
    );
  }
  const loop = reader.integer('loop', defaults.loop, ANSWER_XML_RANGES.loop);
  // The content is one raw text node: Speak is parsed with its markup kept as written.
  const raw = element.children.map((child) => (child.type === 'text' ? child.text : '')).join('');
  const { ssml, text } = readSpeakContent(raw, 'Speak');
  if (ssml === '') throw new AnswerXmlError('Speak', 'text to speak is required');
  return { kind: 'Speak', voice, language, loop, ssml, text };
}

export function readPlay(element: XmlElement): PlayInstruction {
  const reader = new ElementReader(element, ['loop']);
  const loop = reader.integer('loop', ANSWER_XML_DEFAULTS.Play.loop, ANSWER_XML_RANGES.loop);
  const url = reader.urlText(HTTP_PROTOCOLS, 'an http or https URL');
  return { kind: 'Play', url, loop };
}

export function readWait(element: XmlElement): WaitInstruction {
  const defaults = ANSWER_XML_DEFAULTS.Wait;
  const reader = new ElementReader(element, ['length', 'silence', 'minSilence', 'beep']);
  reader.empty();
  return {
    kind: 'Wait',
    length: reader.integer('length', defaults.length, ANSWER_XML_RANGES.waitLength),
    silence: reader.boolean('silence', defaults.silence),
    minSilence: reader.integer('minSilence', defaults.minSilence, ANSWER_XML_RANGES.minSilence),
    beep: reader.boolean('beep', defaults.beep),
  };
}
