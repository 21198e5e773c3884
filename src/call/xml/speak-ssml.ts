import { AnswerXmlError } from './answer-xml-error.js';

/** SSML elements accepted inside Speak; anything else there is refused. */
export const SPEAK_SSML_ELEMENTS = [
  'break',
  'prosody',
  'emphasis',
  'say-as',
  'phoneme',
  'sub',
  'p',
  's',
  'lang',
  'w',
] as const;

/** Elements that separate words, so removing them must leave a space. */
const SEPARATING_ELEMENTS = new Set(['break', 'p', 's']);

const MARKUP =
  /<!\[CDATA\[([\s\S]*?)\]\]>|<!--[\s\S]*?-->|<\/?([^\s/>]+)(?:[^>"']|"[^"]*"|'[^']*')*>/g;

export interface SpeakContent {
  /** The content as written. */
  readonly ssml: string;
  /** What is said: markup removed, entities decoded, whitespace collapsed. */
  readonly text: string;
}

/**
 * Checks the raw content of a Speak element (already known to be well-formed XML) and derives
 * the plain text for speech synthesis. `element` names the element in error messages.
 */
export function readSpeakContent(raw: string, element: string): SpeakContent {
  let text = '';
  let last = 0;
  for (const match of raw.matchAll(MARKUP)) {
    text += decodeEntities(raw.slice(last, match.index));
    last = match.index + match[0].length;
    const [, cdata, tag] = match;
    if (cdata !== undefined) {
      text += cdata;
    } else if (tag !== undefined) {
      if (!(SPEAK_SSML_ELEMENTS as readonly string[]).includes(tag)) {
        throw new AnswerXmlError(
          element,
          `<${tag}> is not allowed inside <${element}> (SSML elements allowed: ${SPEAK_SSML_ELEMENTS.join(', ')})`,
        );
      }
      if (SEPARATING_ELEMENTS.has(tag)) text += ' ';
    }
  }
  text += decodeEntities(raw.slice(last));
  return { ssml: raw.trim(), text: text.replace(/\s+/g, ' ').trim() };
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
};

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z]+);/g, (whole, body: string) => {
    if (body.startsWith('#')) {
      const code = body[1] === 'x' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[body] ?? whole;
  });
}
