import { DTMF_KEYS } from './answer-xml-defaults.js';
import { AnswerXmlError } from './answer-xml-error.js';
import { ElementReader } from './element-reader.js';
import type { XmlElement } from './xml-tree.js';

/**
 * The Record element: records the caller (or, with recordSession or startOnDialAnswer, the
 * whole call in the background) and hands the action URL what was recorded.
 */
export interface RecordInstruction {
  readonly kind: 'Record';
  /** null: no action request; the next element runs. */
  readonly action: string | null;
  readonly method: 'GET' | 'POST';
  readonly fileFormat: 'mp3' | 'wav';
  /** false: the action is told (its answer not followed) and the next element runs. */
  readonly redirect: boolean;
  /** Seconds of silence that end the recording. */
  readonly timeout: number;
  /** Seconds the recording lasts at most. */
  readonly maxLength: number;
  readonly playBeep: boolean;
  /** Keys any of which ends the recording; '' when none does. */
  readonly finishOnKey: string;
  /** Records the whole call in the background while the document goes on. */
  readonly recordSession: boolean;
  /** As recordSession, from when the next Dial's party answers. */
  readonly startOnDialAnswer: boolean;
  readonly callbackUrl: string | null;
  readonly callbackMethod: 'GET' | 'POST';
}

/** The public API's defaults: mp3, 15 s of silence, a minute at most, any key ends it. */
const DEFAULTS = {
  fileFormat: 'mp3',
  timeout: 15,
  maxLength: 60,
  finishOnKey: '1234567890*#',
} as const;

export function readRecord(element: XmlElement): RecordInstruction {
  const reader = new ElementReader(element, [
    'action',
    'method',
    'fileFormat',
    'redirect',
    'timeout',
    'maxLength',
    'playBeep',
    'finishOnKey',
    'recordSession',
    'startOnDialAnswer',
    'callbackUrl',
    'callbackMethod',
  ]);
  reader.empty();
  const finishOnKey = reader.string('finishOnKey')?.trim() ?? DEFAULTS.finishOnKey;
  const keys = finishOnKey === 'none' ? '' : finishOnKey;
  if (![...keys].every((key) => DTMF_KEYS.includes(key))) {
    throw new AnswerXmlError(
      'Record',
      `finishOnKey may hold only 0-9, * and # (or be "none"), got "${finishOnKey}"`,
      'finishOnKey',
    );
  }
  return {
    kind: 'Record',
    action: reader.url('action'),
    method: reader.method('method', 'POST'),
    fileFormat: reader.oneOf('fileFormat', ['mp3', 'wav'], DEFAULTS.fileFormat),
    redirect: reader.boolean('redirect', true),
    timeout: reader.integer('timeout', DEFAULTS.timeout, { min: 1, max: 3600 }),
    maxLength: reader.integer('maxLength', DEFAULTS.maxLength, { min: 1, max: 14_400 }),
    playBeep: reader.boolean('playBeep', true),
    finishOnKey: keys,
    recordSession: reader.boolean('recordSession', false),
    startOnDialAnswer: reader.boolean('startOnDialAnswer', false),
    callbackUrl: reader.url('callbackUrl'),
    callbackMethod: reader.method('callbackMethod', 'POST'),
  };
}
