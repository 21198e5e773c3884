import {
  EXTRA_HEADERS_MAX_BYTES,
  STREAM_DEFAULTS,
  STREAM_TIMEOUT_MAX_SECONDS,
} from '../streams/stream-request.js';

/**
 * Every default and limit the answer XML parser applies, in one place. Where the wire notes and
 * the voice document are silent, the values follow what clients of the public voice API see
 * from it (their documents rely on them), and each such choice says so.
 */

/** The wire notes: answer XML is at most 100 KB. */
export const ANSWER_XML_MAX_BYTES = 100 * 1024;

/** Characters a caller can press. */
export const DTMF_KEYS = '1234567890*#';

export const ANSWER_XML_DEFAULTS = {
  /** Voice document (Speak endpoint): voice WOMAN, language en-US. One play of the text. */
  Speak: { voice: 'WOMAN', language: 'en-US', loop: 1 },
  Play: { loop: 1 },
  /** Seconds of waiting; minSilence (ms) only matters with silence="true". */
  Wait: { length: 1, silence: false, minSilence: 2000, beep: false },
  /** schedule 0 hangs up at once; no reason is a normal hangup. */
  Hangup: { schedule: 0, reason: null },
  Redirect: { method: 'POST' },
  /** async: the next element starts while the digits are still being sent. */
  DTMF: { async: true },
  GetDigits: {
    method: 'POST',
    timeout: 5,
    digitTimeout: 2,
    finishOnKey: '#',
    numDigits: 99,
    retries: 1,
    validDigits: DTMF_KEYS,
    playBeep: false,
    /** After collecting digits, fetch the action URL and run its XML in place of the rest. */
    redirect: true,
  },
  GetInput: {
    method: 'POST',
    /** Seconds to wait for the whole input. */
    executionTimeout: 15,
    /** Seconds of silence after a digit that end DTMF input; `auto` lets the gateway decide. */
    digitEndTimeout: 'auto',
    finishOnKey: '#',
    numDigits: 32,
  },
  Dial: {
    method: 'POST',
    /** null: no Dial ring timeout of its own; the destination's or the trunk's applies. */
    timeout: null,
    hangupOnStar: false,
    /** Same as the create-call time_limit default. */
    timeLimit: 14400,
    /** `real` relays the B leg's ringback; otherwise a URL of XML with Play/Speak/Wait. */
    dialMusic: 'real',
    redirect: true,
    callbackMethod: 'POST',
  },
  Number: { sendOnPreanswer: false },
  /** Voice document (Stream endpoint) defaults, the REST API's too. */
  Stream: { ...STREAM_DEFAULTS, keepCallAlive: false },
} as const;

/** Inclusive ranges of the numeric attributes. */
export const ANSWER_XML_RANGES = {
  /** 0 repeats forever. */
  loop: { min: 0, max: 10000 },
  waitLength: { min: 1, max: 86400 },
  minSilence: { min: 1, max: 60000 },
  hangupSchedule: { min: 0, max: 86400 },
  getDigitsTimeout: { min: 1, max: 600 },
  getDigitsDigitTimeout: { min: 1, max: 600 },
  getDigitsNumDigits: { min: 1, max: 99 },
  getDigitsRetries: { min: 1, max: 10 },
  getInputExecutionTimeout: { min: 5, max: 60 },
  getInputDigitEndTimeout: { min: 2, max: 10 },
  getInputNumDigits: { min: 1, max: 32 },
  dialTimeout: { min: 1, max: 600 },
  dialTimeLimit: { min: 1, max: 86400 },
  streamTimeout: { min: 1, max: STREAM_TIMEOUT_MAX_SECONDS },
  noiseCancellationLevel: { min: 60, max: 100 },
} as const;

/** Voice document: caller_name is up to 50 characters. */
export const CALLER_NAME_MAX_CHARS = 50;
/** Wire notes: Stream extraHeaders is at most 512 bytes (the REST API's extra_headers too). */
export const STREAM_EXTRA_HEADERS_MAX_BYTES = EXTRA_HEADERS_MAX_BYTES;
