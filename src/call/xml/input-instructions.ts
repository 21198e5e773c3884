import type {
  GetDigitsInstruction,
  GetInputInstruction,
  PromptInstruction,
} from './answer-document.js';
import { ANSWER_XML_DEFAULTS, ANSWER_XML_RANGES, DTMF_KEYS } from './answer-xml-defaults.js';
import { AnswerXmlError } from './answer-xml-error.js';
import { ElementReader } from './element-reader.js';
import { readPlay, readSpeak, readWait } from './prompt-instructions.js';
import type { XmlElement } from './xml-tree.js';

const PROMPT_ELEMENTS = ['Speak', 'Play', 'Wait'] as const;

export function readGetDigits(element: XmlElement): GetDigitsInstruction {
  const defaults = ANSWER_XML_DEFAULTS.GetDigits;
  const reader = new ElementReader(element, [
    'action',
    'method',
    'timeout',
    'digitTimeout',
    'finishOnKey',
    'numDigits',
    'retries',
    'invalidDigitsSound',
    'validDigits',
    'playBeep',
    'redirect',
  ]);
  const validDigits = reader.string('validDigits') ?? defaults.validDigits;
  if (![...validDigits].every((key) => DTMF_KEYS.includes(key))) {
    throw new AnswerXmlError(
      'GetDigits',
      `validDigits may hold only 0-9, * and #, got "${validDigits}"`,
      'validDigits',
    );
  }
  return {
    kind: 'GetDigits',
    action: reader.url('action'),
    method: reader.method('method', defaults.method),
    timeout: reader.integer('timeout', defaults.timeout, ANSWER_XML_RANGES.getDigitsTimeout),
    digitTimeout: reader.integer(
      'digitTimeout',
      defaults.digitTimeout,
      ANSWER_XML_RANGES.getDigitsDigitTimeout,
    ),
    finishOnKey: readFinishOnKey(reader, defaults.finishOnKey),
    numDigits: reader.integer(
      'numDigits',
      defaults.numDigits,
      ANSWER_XML_RANGES.getDigitsNumDigits,
    ),
    retries: reader.integer('retries', defaults.retries, ANSWER_XML_RANGES.getDigitsRetries),
    invalidDigitsSound: reader.url('invalidDigitsSound'),
    validDigits,
    playBeep: reader.boolean('playBeep', defaults.playBeep),
    redirect: reader.boolean('redirect', defaults.redirect),
    prompts: readPrompts(reader),
  };
}

export function readGetInput(element: XmlElement): GetInputInstruction {
  const defaults = ANSWER_XML_DEFAULTS.GetInput;
  const reader = new ElementReader(element, [
    'action',
    'method',
    'inputType',
    'executionTimeout',
    'digitEndTimeout',
    'finishOnKey',
    'numDigits',
  ]);
  const action = reader.url('action');
  if (action === null) throw new AnswerXmlError('GetInput', 'action is required', 'action');
  const inputType = reader.oneOf('inputType', ['dtmf', 'speech', 'dtmf speech'], null);
  if (inputType === null) {
    throw new AnswerXmlError('GetInput', 'inputType is required', 'inputType');
  }
  const digitEndTimeout = reader.string('digitEndTimeout') ?? defaults.digitEndTimeout;
  return {
    kind: 'GetInput',
    action,
    method: reader.method('method', defaults.method),
    inputType,
    executionTimeout: reader.integer(
      'executionTimeout',
      defaults.executionTimeout,
      ANSWER_XML_RANGES.getInputExecutionTimeout,
    ),
    digitEndTimeout:
      digitEndTimeout === 'auto'
        ? 'auto'
        : reader.parseInteger(
            'digitEndTimeout',
            digitEndTimeout,
            ANSWER_XML_RANGES.getInputDigitEndTimeout,
          ),
    finishOnKey: readFinishOnKey(reader, defaults.finishOnKey),
    numDigits: reader.integer('numDigits', defaults.numDigits, ANSWER_XML_RANGES.getInputNumDigits),
    prompts: readPrompts(reader),
  };
}

/** One key from 0-9, * and #; `""` or `none` mean no key ends the input (null). */
function readFinishOnKey(reader: ElementReader, fallback: string): string | null {
  const value = reader.element.attributes.finishOnKey?.trim();
  if (value === undefined) return fallback;
  if (value === '' || value === 'none') return null;
  if (value.length !== 1 || !DTMF_KEYS.includes(value)) {
    throw new AnswerXmlError(
      reader.name,
      `finishOnKey must be one of 0-9, *, # or "none", got "${value}"`,
      'finishOnKey',
    );
  }
  return value;
}

function readPrompts(reader: ElementReader): PromptInstruction[] {
  return reader.children(PROMPT_ELEMENTS).map((child) => {
    if (child.name === 'Speak') return readSpeak(child);
    if (child.name === 'Play') return readPlay(child);
    return readWait(child);
  });
}
