import { inspect } from 'node:util';
import { isReservedSipHeader, type SipHeaderPair } from './client-sip-headers.js';
import { isPossiblePhoneNumber } from 'libphonenumber-js';
import { HTTP_PROTOCOLS, isAbsoluteUrl } from '../core/absolute-url.js';
import { invalidParameter, missingParameter, type ApiError } from '../core/errors.js';
import { remembered } from '../core/remembered.js';
import { parseUri } from '../sip/message/index.js';

/*
 * The parameters of `POST /v1/Account/{auth_id}/Call/` and their rules (OUTBOUND_CALL_PARAMETERS
 * below). Where the API document is silent, the choice is what clients of the public service
 * expect:
 *
 * | Parameter                    | Choice where the document is silent                         |
 * |------------------------------|-------------------------------------------------------------|
 * | from                         | a phone number only, no SIP URI: optional `+`, 2-15 digits, |
 * |                              | possible for its country (libphonenumber); kept `+<digits>` |
 * | from, to                     | whitespace around numbers trimmed (an unencoded `+` in a    |
 * |                              | form arrives as a space)                                    |
 * | to                           | SIP URIs parsed per RFC 3261, without a password or         |
 * |                              | `?headers` (those go in sip_auth_*, sip_headers); duplicate |
 * |                              | destinations kept, in order                                 |
 * | *_url / *_method             | http(s) with a host, at most 2048 chars / exactly GET, POST |
 * | caller_name                  | no control characters (it becomes a SIP display name)       |
 * | send_digits                  | at most 128 characters                                      |
 * | time_limit                   | 1 to 86400 s                                                |
 * | hangup_on_ring, ring_timeout | 1 to 7200 s; no default here (the engine's ring timeout)    |
 * | machine_detection_*          | accepted and kept even without machine_detection            |
 * | sip_headers                  | at most 2048 chars; keys and values are RFC 3261 tokens     |
 * |                              | (letters, digits, - . ! % * _ + ` ' ~: a superset of the    |
 * |                              | public service's letters, digits and %); spaces around      |
 * |                              | pairs ignored; reserved names dropped ignoring case         |
 * | sip_auth_username            | 1 to 128 printable ASCII characters but space, `"` and `\`  |
 * | sip_auth_username / password | one without the other: missing required parameter (422)     |
 * | parent_call_uuid             | a UUID, kept lower-case                                     |
 * | parent_auth_id               | 1 to 64 letters or digits                                   |
 * | booleans                     | true/false, or the strings "true"/"false" of a form         |
 * | delimiter                    | 1 to 5 characters, none a letter, a digit or `+`            |
 * | an optional parameter        | an empty string is a value, validated like any other        |
 *
 * Messages never quote a value the client sent, so no credential reaches an error or a log.
 */

export type CallbackMethod = 'GET' | 'POST';
export type MachineDetection = 'true' | 'hangup';
export type CallType = 'voice' | 'chatapp_voice';

/** One destination of `to`: a phone number (`+<digits>`) or a SIP/SIPS URI as written. */
export type Destination = { kind: 'number'; number: string } | { kind: 'sip'; uri: string };

/**
 * Digest credentials for SIP destinations. The password is held in a private field: it is left
 * out of JSON, of util.inspect and so of every log line an object holding it could reach.
 */
export class SipAuthCredentials {
  readonly #username: string;
  readonly #password: string;

  constructor(username: string, password: string) {
    this.#username = username;
    this.#password = password;
  }

  get username(): string {
    return this.#username;
  }

  get password(): string {
    return this.#password;
  }

  toJSON(): string {
    return '[redacted]';
  }

  [inspect.custom](): string {
    return 'SipAuthCredentials [redacted]';
  }
}

/** A create-call request with every rule checked and every default applied. */
export interface OutboundCallRequest {
  from: string;
  to: Destination[];
  answerUrl: string;
  answerMethod: CallbackMethod;
  ringUrl: string | null;
  ringMethod: CallbackMethod;
  hangupUrl: string | null;
  hangupMethod: CallbackMethod;
  fallbackUrl: string | null;
  fallbackMethod: CallbackMethod;
  callerName: string | null;
  sendDigits: string | null;
  sendOnPreanswer: boolean;
  /** Seconds. */
  timeLimit: number;
  hangupOnRing: number | null;
  ringTimeout: number | null;
  machineDetection: MachineDetection | null;
  /** Milliseconds, like every machine_detection_* duration. */
  machineDetectionTime: number;
  machineDetectionUrl: string | null;
  machineDetectionMethod: CallbackMethod;
  machineDetectionMaximumSpeechLength: number | null;
  machineDetectionInitialSilence: number | null;
  machineDetectionMaximumWords: number | null;
  machineDetectionInitialGreeting: number | null;
  machineDetectionSilence: number | null;
  machineDetectionAnswerTime: number | null;
  /** Reserved names already dropped; see outboundSipHeaders. */
  sipHeaders: SipHeaderPair[];
  sipAuth: SipAuthCredentials | null;
  parentCallUuid: string | null;
  parentAuthId: string | null;
  errorIfParentNotFound: boolean;
  callType: CallType;
  delimiter: string;
}

/** How one wire parameter is typed, and its rule as error messages and /docs state it. */
export interface OutboundCallParameter {
  type: 'string' | 'integer' | 'boolean';
  rule: string;
  required?: true;
  minimum?: number;
  maximum?: number;
  values?: readonly string[];
}

export const MAX_DESTINATIONS = 1000;
const MAX_SIP_HEADERS = 2048;

const url: OutboundCallParameter = { type: 'string', rule: 'an http or https URL' };
const method: OutboundCallParameter = {
  type: 'string',
  rule: 'GET or POST',
  values: ['GET', 'POST'],
};
const integer = (minimum: number, maximum: number, unit = ''): OutboundCallParameter => ({
  type: 'integer',
  rule: `an integer from ${minimum} to ${maximum}${unit}`,
  minimum,
  maximum,
});
const boolean: OutboundCallParameter = { type: 'boolean', rule: 'true or false' };

/** Every parameter, in the order the API document lists them (and rules are checked). */
export const OUTBOUND_CALL_PARAMETERS = {
  from: { type: 'string', required: true, rule: 'a phone number in E.164 format' },
  to: {
    type: 'string',
    required: true,
    rule: `E.164 phone numbers or sip:/sips: URIs separated by the delimiter, at most ${MAX_DESTINATIONS}`,
  },
  answer_url: { ...url, required: true },
  answer_method: method,
  ring_url: url,
  ring_method: method,
  hangup_url: url,
  hangup_method: method,
  fallback_url: url,
  fallback_method: method,
  caller_name: { type: 'string', rule: 'at most 50 characters, without control characters' },
  send_digits: {
    type: 'string',
    rule: '1 to 128 of the characters 0-9 * # A B C D, w (wait 0.5 s) and W (wait 1 s)',
  },
  send_on_preanswer: boolean,
  time_limit: integer(1, 86400, ' (seconds)'),
  hangup_on_ring: integer(1, 7200, ' (seconds)'),
  ring_timeout: integer(1, 7200, ' (seconds)'),
  machine_detection: { type: 'string', rule: 'true or hangup', values: ['true', 'hangup'] },
  machine_detection_time: integer(2000, 10000, ' (milliseconds)'),
  machine_detection_url: url,
  machine_detection_method: method,
  machine_detection_maximum_speech_length: integer(1000, 6000, ' (milliseconds)'),
  machine_detection_initial_silence: integer(2000, 10000, ' (milliseconds)'),
  machine_detection_maximum_words: integer(2, 10),
  machine_detection_initial_greeting: integer(1000, 5000, ' (milliseconds)'),
  machine_detection_silence: integer(500, 5000, ' (milliseconds)'),
  machine_detection_answer_time: integer(100, 45000, ' (milliseconds)'),
  sip_headers: {
    type: 'string',
    rule: `key=value pairs separated by commas, at most ${MAX_SIP_HEADERS} characters, keys and values made of letters, digits and - . ! % * _ + \` ' ~`,
  },
  sip_auth_username: {
    type: 'string',
    rule: '1 to 128 printable characters other than space, " and \\',
  },
  sip_auth_password: {
    type: 'string',
    rule: '8 to 128 characters with at least one upper-case letter, one lower-case letter and one digit',
  },
  parent_call_uuid: { type: 'string', rule: 'a UUID' },
  parent_auth_id: { type: 'string', rule: '1 to 64 letters or digits' },
  error_if_parent_not_found: boolean,
  call_type: { type: 'string', rule: 'voice or chatapp_voice', values: ['voice', 'chatapp_voice'] },
  delimiter: { type: 'string', rule: '1 to 5 characters, none of them a letter, a digit or +' },
} as const satisfies Record<string, OutboundCallParameter>;

export type OutboundCallParameterName = keyof typeof OUTBOUND_CALL_PARAMETERS;

const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const DIGITS = /^[0-9*#A-DwW]{1,128}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const AUTH_ID = /^[A-Za-z0-9]{1,64}$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const SIP_USERNAME = /^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/;
const E164 = /^\+?([1-9][0-9]{1,14})$/;

type Name = OutboundCallParameterName;
type Body = Record<string, unknown>;

const invalid = (name: Name, detail = ''): ApiError =>
  invalidParameter(`invalid ${name}: must be ${OUTBOUND_CALL_PARAMETERS[name].rule}${detail}`);

/**
 * Checks a create-call body (JSON, or a form whose values are all strings) and returns the typed
 * request. Throws an ApiError: `missing_parameter` (422) for an absent required parameter,
 * `invalid_parameter` (400) naming the parameter and its rule for anything else.
 */
export function parseOutboundCallRequest(input: unknown): OutboundCallRequest {
  const body: Body = typeof input === 'object' && input !== null ? (input as Body) : {};
  for (const name of ['from', 'to', 'answer_url', 'sip_auth_username', 'sip_auth_password']) {
    // A SIP credential is required only by the other one.
    const other = name === 'sip_auth_username' ? 'sip_auth_password' : 'sip_auth_username';
    const required = !name.startsWith('sip_auth_') || body[other] !== undefined;
    if (required && body[name] === undefined) {
      throw missingParameter(`missing required parameter: ${name}`);
    }
  }
  const read = new BodyReader(body);
  const delimiter = read.optionalText('delimiter', isDelimiter) ?? '<';
  const request: OutboundCallRequest = {
    from: phoneNumber(read.text('from')) ?? fail(invalid('from')),
    to: destinations(read.text('to'), delimiter),
    answerUrl: read.text('answer_url', isHttpUrl),
    answerMethod: read.method('answer_method'),
    ringUrl: read.optionalText('ring_url', isHttpUrl),
    ringMethod: read.method('ring_method'),
    hangupUrl: read.optionalText('hangup_url', isHttpUrl),
    hangupMethod: read.method('hangup_method'),
    fallbackUrl: read.optionalText('fallback_url', isHttpUrl),
    fallbackMethod: read.method('fallback_method'),
    callerName: read.optionalText('caller_name', (v) => [...v].length <= 50 && !CONTROL.test(v)),
    sendDigits: read.optionalText('send_digits', (v) => DIGITS.test(v)),
    sendOnPreanswer: read.boolean('send_on_preanswer') ?? false,
    timeLimit: read.integer('time_limit') ?? 14400,
    hangupOnRing: read.integer('hangup_on_ring'),
    ringTimeout: read.integer('ring_timeout'),
    machineDetection: read.oneOf('machine_detection'),
    machineDetectionTime: read.integer('machine_detection_time') ?? 5000,
    machineDetectionUrl: read.optionalText('machine_detection_url', isHttpUrl),
    machineDetectionMethod: read.method('machine_detection_method'),
    machineDetectionMaximumSpeechLength: read.integer('machine_detection_maximum_speech_length'),
    machineDetectionInitialSilence: read.integer('machine_detection_initial_silence'),
    machineDetectionMaximumWords: read.integer('machine_detection_maximum_words'),
    machineDetectionInitialGreeting: read.integer('machine_detection_initial_greeting'),
    machineDetectionSilence: read.integer('machine_detection_silence'),
    machineDetectionAnswerTime: read.integer('machine_detection_answer_time'),
    sipHeaders: sipHeaderPairs(read.optionalText('sip_headers')),
    sipAuth: null,
    parentCallUuid:
      read.optionalText('parent_call_uuid', (v) => UUID.test(v))?.toLowerCase() ?? null,
    parentAuthId: read.optionalText('parent_auth_id', (v) => AUTH_ID.test(v)),
    errorIfParentNotFound: read.boolean('error_if_parent_not_found') ?? false,
    callType: read.oneOf('call_type') ?? 'voice',
    delimiter,
  };
  const username = read.optionalText('sip_auth_username', (v) => SIP_USERNAME.test(v));
  const password = read.optionalText('sip_auth_password', isStrongPassword);
  if (username !== null && password !== null) {
    if (request.to.some((d) => d.kind !== 'sip')) {
      throw invalidParameter(
        'invalid sip_auth_username: must be used only when every destination in to is a SIP URI',
      );
    }
    request.sipAuth = new SipAuthCredentials(username, password);
  }
  return request;
}

/** Reads parameters the way the route's schema coerces them, failing with the parameter's rule. */
class BodyReader {
  constructor(private readonly body: Body) {}

  text(name: Name, valid: (value: string) => boolean = () => true): string {
    const raw = this.body[name];
    // A JSON number or boolean where a string is expected is taken as its text, as Ajv does.
    const value = typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : raw;
    if (typeof value !== 'string' || !valid(value)) throw invalid(name);
    return value;
  }

  optionalText(name: Name, valid?: (value: string) => boolean): string | null {
    return this.body[name] === undefined ? null : this.text(name, valid);
  }

  method(name: Name): CallbackMethod {
    return (this.optionalText(name, (v) => v === 'GET' || v === 'POST') ??
      'POST') as CallbackMethod;
  }

  oneOf<K extends 'machine_detection' | 'call_type'>(
    name: K,
  ): (typeof OUTBOUND_CALL_PARAMETERS)[K]['values'][number] | null {
    const values: readonly string[] = OUTBOUND_CALL_PARAMETERS[name].values;
    const value = this.optionalText(name, (v) => values.includes(v));
    return value as (typeof OUTBOUND_CALL_PARAMETERS)[K]['values'][number] | null;
  }

  integer(name: Name): number | null {
    const raw = this.body[name];
    if (raw === undefined) return null;
    const value = typeof raw === 'string' && /^\s*[+-]?\d+\s*$/.test(raw) ? Number(raw) : raw;
    const { minimum = 1, maximum = Number.MAX_SAFE_INTEGER } = OUTBOUND_CALL_PARAMETERS[
      name
    ] as OutboundCallParameter;
    if (typeof value !== 'number' || !Number.isInteger(value)) throw invalid(name);
    if (value < minimum || value > maximum) throw invalid(name);
    return value;
  }

  boolean(name: Name): boolean | null {
    const raw = this.body[name];
    if (raw === undefined) return null;
    if (raw === true || raw === 'true') return true;
    if (raw === false || raw === 'false') return false;
    throw invalid(name);
  }
}

const fail = (error: ApiError): never => {
  throw error;
};

/** `+<digits>` for an E.164 number that is possible for its country, else null. */
function phoneNumber(text: string): string | null {
  const match = E164.exec(text.trim());
  if (!match?.[1]) return null;
  const e164 = `+${match[1]}`;
  return isPossible(e164) ? e164 : null;
}

/** The caller ids of an account's calls repeat: their checks are kept. */
const isPossible = remembered((e164) => isPossiblePhoneNumber(e164), 10_000);

function destinations(text: string, delimiter: string): Destination[] {
  const parts = text.split(delimiter).map((part) => part.trim());
  if (parts.length > MAX_DESTINATIONS) {
    throw invalidParameter(
      `invalid to: must be at most ${MAX_DESTINATIONS} destinations, not ${parts.length}`,
    );
  }
  return parts.map((part, index) => {
    const position = index + 1;
    if (part === '') throw invalid('to', `; destination ${position} is empty`);
    const number = phoneNumber(part);
    if (number !== null) return { kind: 'number', number };
    if (isPlainSipUri(part)) return { kind: 'sip', uri: part };
    throw invalid('to', `; destination ${position} is neither`);
  });
}

/** A sip: or sips: URI without a password or header fields. */
function isPlainSipUri(text: string): boolean {
  if (!/^sips?:/i.test(text)) return false;
  try {
    const uri = parseUri(text);
    return uri.password === null && uri.headers.size === 0;
  } catch {
    return false;
  }
}

function isHttpUrl(text: string): boolean {
  return isAbsoluteUrl(text, HTTP_PROTOCOLS);
}

function isDelimiter(text: string): boolean {
  const length = [...text].length;
  return length >= 1 && length <= 5 && !/[\p{L}\p{N}+]/u.test(text);
}

function isStrongPassword(text: string): boolean {
  const length = [...text].length;
  return (
    length >= 8 && length <= 128 && /[A-Z]/.test(text) && /[a-z]/.test(text) && /[0-9]/.test(text)
  );
}

function sipHeaderPairs(text: string | null): SipHeaderPair[] {
  if (text === null) return [];
  if (text.length > MAX_SIP_HEADERS) throw invalid('sip_headers');
  const pairs = text.split(',').map((item) => {
    const equals = item.indexOf('=');
    const key = item.slice(0, equals).trim();
    const value = item.slice(equals + 1).trim();
    if (equals < 0 || !TOKEN.test(key) || !TOKEN.test(value)) throw invalid('sip_headers');
    return { key, value };
  });
  return pairs.filter((pair) => !isReservedSipHeader(pair.key));
}
