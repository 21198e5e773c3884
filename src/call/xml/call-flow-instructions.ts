import type {
  DtmfInstruction,
  HangupInstruction,
  RedirectInstruction,
  UnsupportedInstruction,
} from './answer-document.js';
import { ANSWER_XML_DEFAULTS, ANSWER_XML_RANGES } from './answer-xml-defaults.js';
import { AnswerXmlError } from './answer-xml-error.js';
import { ElementReader, HTTP_PROTOCOLS } from './element-reader.js';
import type { XmlElement } from './xml-tree.js';

/** Digits DTMF and sendDigits may send: keys, A-D, and `w`/`W` pauses of 0.5 s and 1 s. */
export const SENDABLE_DIGITS = /^[0-9*#A-DwW]+$/;

export function readHangup(element: XmlElement): HangupInstruction {
  const defaults = ANSWER_XML_DEFAULTS.Hangup;
  const reader = new ElementReader(element, ['schedule', 'reason']);
  reader.empty();
  return {
    kind: 'Hangup',
    schedule: reader.integer('schedule', defaults.schedule, ANSWER_XML_RANGES.hangupSchedule),
    reason: reader.oneOf('reason', ['rejected', 'busy'], defaults.reason),
  };
}

export function readRedirect(element: XmlElement): RedirectInstruction {
  const reader = new ElementReader(element, ['method']);
  return {
    kind: 'Redirect',
    url: reader.urlText(HTTP_PROTOCOLS, 'an http or https URL'),
    method: reader.method('method', ANSWER_XML_DEFAULTS.Redirect.method),
  };
}

/** The digits may be the element's text (`<DTMF>123</DTMF>`) or its `digits` attribute. */
export function readDtmf(element: XmlElement): DtmfInstruction {
  const reader = new ElementReader(element, ['digits', 'async']);
  const fromAttribute = reader.string('digits');
  const fromText = reader.text();
  if (fromAttribute !== null && fromText !== '') {
    throw new AnswerXmlError(
      'DTMF',
      'give the digits as text or as the digits attribute, not both',
    );
  }
  const digits = fromAttribute ?? fromText;
  if (digits === '') {
    throw new AnswerXmlError('DTMF', 'digits are required (as text or the digits attribute)');
  }
  if (!SENDABLE_DIGITS.test(digits)) {
    throw new AnswerXmlError(
      'DTMF',
      `digits may hold only 0-9, *, #, A-D, w and W, got "${digits}"`,
      fromAttribute === null ? null : 'digits',
    );
  }
  return { kind: 'DTMF', digits, async: reader.boolean('async', ANSWER_XML_DEFAULTS.DTMF.async) };
}

/** Record, Message, MultiPartyCall: kept with their attributes as written. */
export function readUnsupported(
  element: XmlElement,
  kind: UnsupportedInstruction['kind'],
): UnsupportedInstruction {
  const reader = new ElementReader(element, Object.keys(element.attributes));
  return { kind, attributes: { ...element.attributes }, text: reader.text() };
}
