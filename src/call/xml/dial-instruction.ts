import type { DialInstruction, DialNumber, DialTarget, DialUser } from './answer-document.js';
import {
  ANSWER_XML_DEFAULTS,
  ANSWER_XML_RANGES,
  CALLER_NAME_MAX_CHARS,
  DTMF_KEYS,
} from './answer-xml-defaults.js';
import { AnswerXmlError } from './answer-xml-error.js';
import { SENDABLE_DIGITS } from './call-flow-instructions.js';
import { ElementReader, HTTP_PROTOCOLS, isUrl } from './element-reader.js';
import type { XmlElement } from './xml-tree.js';

/** Digits with an optional leading +; kept as written, never as a number. */
const PHONE_NUMBER = /^\+?[0-9*#]{1,32}$/;
const SIP_URI = /^sip:[^\s@]+@[^\s@]+$/;

export function readDial(element: XmlElement): DialInstruction {
  const defaults = ANSWER_XML_DEFAULTS.Dial;
  const reader = new ElementReader(element, [
    'action',
    'method',
    'timeout',
    'hangupOnStar',
    'timeLimit',
    'callerId',
    'callerName',
    'confirmSound',
    'confirmKey',
    'dialMusic',
    'redirect',
    'callbackUrl',
    'callbackMethod',
    'digitsMatch',
    'sipHeaders',
  ]);
  const targets = reader.children(['Number', 'User']).map(readDialTarget);
  if (targets.length === 0) {
    throw new AnswerXmlError('Dial', 'at least one <Number> or <User> is required');
  }
  return {
    kind: 'Dial',
    action: reader.url('action'),
    method: reader.method('method', defaults.method),
    timeout: reader.integer('timeout', defaults.timeout, ANSWER_XML_RANGES.dialTimeout),
    hangupOnStar: reader.boolean('hangupOnStar', defaults.hangupOnStar),
    timeLimit: reader.integer('timeLimit', defaults.timeLimit, ANSWER_XML_RANGES.dialTimeLimit),
    callerId: reader.string('callerId'),
    callerName: readCallerName(reader),
    confirmSound: reader.url('confirmSound'),
    confirmKey: readConfirmKey(reader),
    dialMusic: readDialMusic(reader, defaults.dialMusic),
    redirect: reader.boolean('redirect', defaults.redirect),
    callbackUrl: reader.url('callbackUrl'),
    callbackMethod: reader.method('callbackMethod', defaults.callbackMethod),
    digitsMatch: reader.digitSequences('digitsMatch'),
    sipHeaders: reader.headerList('sipHeaders'),
    targets,
  };
}

function readDialTarget(element: XmlElement): DialTarget {
  return element.name === 'Number' ? readNumber(element) : readUser(element);
}

function readNumber(element: XmlElement): DialNumber {
  const reader = new ElementReader(element, [
    'sendDigits',
    'sendOnPreanswer',
    'callerId',
    'callerName',
  ]);
  const number = reader.requiredText('the number to call');
  if (!PHONE_NUMBER.test(number)) {
    throw new AnswerXmlError(
      'Number',
      `text must be a phone number (digits with an optional leading +), got "${number}"`,
    );
  }
  return {
    kind: 'Number',
    number,
    sendDigits: readSendDigits(reader),
    sendOnPreanswer: reader.boolean('sendOnPreanswer', ANSWER_XML_DEFAULTS.Number.sendOnPreanswer),
    callerId: reader.string('callerId'),
    callerName: readCallerName(reader),
  };
}

function readUser(element: XmlElement): DialUser {
  const reader = new ElementReader(element, ['sendDigits', 'sipHeaders']);
  const uri = reader.requiredText('a sip: URI');
  if (!SIP_URI.test(uri)) {
    throw new AnswerXmlError(
      'User',
      `text must be a sip: URI such as sip:alice@example.com, got "${uri}"`,
    );
  }
  return {
    kind: 'User',
    uri,
    sendDigits: readSendDigits(reader),
    sipHeaders: reader.headerList('sipHeaders'),
  };
}

function readSendDigits(reader: ElementReader): string | null {
  const digits = reader.string('sendDigits');
  if (digits !== null && !SENDABLE_DIGITS.test(digits)) {
    throw new AnswerXmlError(
      reader.name,
      `sendDigits may hold only 0-9, *, #, A-D, w and W, got "${digits}"`,
      'sendDigits',
    );
  }
  return digits;
}

function readCallerName(reader: ElementReader): string | null {
  const name = reader.string('callerName');
  if (name !== null && [...name].length > CALLER_NAME_MAX_CHARS) {
    throw new AnswerXmlError(
      reader.name,
      `callerName must be at most ${CALLER_NAME_MAX_CHARS} characters, got ${[...name].length}`,
      'callerName',
    );
  }
  return name;
}

function readConfirmKey(reader: ElementReader): string | null {
  const key = reader.string('confirmKey');
  if (key !== null && (key.length !== 1 || !DTMF_KEYS.includes(key))) {
    throw new AnswerXmlError(
      'Dial',
      `confirmKey must be one of 0-9, * or #, got "${key}"`,
      'confirmKey',
    );
  }
  return key;
}

function readDialMusic(reader: ElementReader, fallback: string): string {
  const music = reader.string('dialMusic') ?? fallback;
  if (music !== 'real' && !isUrl(music, HTTP_PROTOCOLS)) {
    throw new AnswerXmlError(
      'Dial',
      `dialMusic must be "real" or an http or https URL, got "${music}"`,
      'dialMusic',
    );
  }
  return music;
}
