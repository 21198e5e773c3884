import { AnswerXmlError } from './answer-xml-error.js';
import { ElementReader, HTTP_PROTOCOLS, isUrl } from './element-reader.js';
import type { XmlElement } from './xml-tree.js';

type HttpMethod = 'GET' | 'POST';

/** enterSound and exitSound: nothing, one beep, two beeps, or a URL of Play/Speak/Wait XML. */
export type ConferenceSound = { kind: 'beep'; count: 1 | 2 } | { kind: 'url'; url: string } | null;

/**
 * The answer XML's Conference: the caller joins the room named by the element's text (rooms are
 * the account's own). Names as the public API's attributes; times in seconds.
 */
export interface ConferenceInstruction {
  readonly kind: 'Conference';
  readonly name: string;
  readonly muted: boolean;
  readonly enterSound: ConferenceSound;
  readonly exitSound: ConferenceSound;
  readonly startConferenceOnEnter: boolean;
  readonly endConferenceOnExit: boolean;
  readonly stayAlone: boolean;
  /** A URL of Play/Speak/Wait XML (or an audio file) played while the conference waits. */
  readonly waitSound: string | null;
  readonly maxMembers: number;
  /** Seconds the member may stay; 0 = no limit. */
  readonly timeLimit: number;
  readonly hangupOnStar: boolean;
  /** The conference is recorded (the mix of every member) once this member is in it. */
  readonly record: boolean;
  readonly recordFileFormat: 'mp3' | 'wav';
  /** false: the recording starts once two members are in the mix; true: with the first. */
  readonly recordWhenAlone: boolean;
  readonly action: string | null;
  readonly method: HttpMethod;
  readonly redirect: boolean;
  readonly callbackUrl: string | null;
  readonly callbackMethod: HttpMethod;
  readonly digitsMatch: readonly string[];
  readonly floorEvent: boolean;
  readonly relayDTMF: boolean;
}

/** Public API: at most 100 members in a room, 20 unless maxMembers says otherwise. */
export const CONFERENCE_DEFAULTS = { maxMembers: 20, timeLimit: 86400 } as const;
export const CONFERENCE_MAX_MEMBERS = 100;
/** Longest room name, in characters: it is a path segment of the Conference API. */
export const CONFERENCE_NAME_MAX_CHARS = 128;

const ATTRIBUTES = [
  'muted',
  'enterSound',
  'exitSound',
  'startConferenceOnEnter',
  'endConferenceOnExit',
  'stayAlone',
  'waitSound',
  'maxMembers',
  'timeLimit',
  'hangupOnStar',
  'record',
  'recordFileFormat',
  'recordWhenAlone',
  'action',
  'method',
  'redirect',
  'callbackUrl',
  'callbackMethod',
  'digitsMatch',
  'floorEvent',
  'relayDTMF',
  'transcriptionType',
  'transcriptionUrl',
  'transcriptionMethod',
] as const;

export function readConference(element: XmlElement): ConferenceInstruction {
  const reader = new ElementReader(element, ATTRIBUTES);
  return {
    kind: 'Conference',
    name: readName(reader),
    muted: reader.boolean('muted', false),
    enterSound: readSound(reader, 'enterSound'),
    exitSound: readSound(reader, 'exitSound'),
    startConferenceOnEnter: reader.boolean('startConferenceOnEnter', true),
    endConferenceOnExit: reader.boolean('endConferenceOnExit', false),
    stayAlone: reader.boolean('stayAlone', true),
    waitSound: reader.url('waitSound'),
    maxMembers: reader.integer('maxMembers', CONFERENCE_DEFAULTS.maxMembers, {
      min: 1,
      max: CONFERENCE_MAX_MEMBERS,
    }),
    timeLimit: reader.integer('timeLimit', CONFERENCE_DEFAULTS.timeLimit, { min: 0, max: 86400 }),
    hangupOnStar: reader.boolean('hangupOnStar', false),
    record: reader.boolean('record', false),
    recordFileFormat: reader.oneOf('recordFileFormat', ['mp3', 'wav'], 'mp3'),
    recordWhenAlone: reader.boolean('recordWhenAlone', false),
    action: reader.url('action'),
    method: reader.method('method', 'POST'),
    redirect: reader.boolean('redirect', true),
    callbackUrl: reader.url('callbackUrl'),
    callbackMethod: reader.method('callbackMethod', 'POST'),
    digitsMatch: reader.digitSequences('digitsMatch'),
    floorEvent: reader.boolean('floorEvent', false),
    relayDTMF: reader.boolean('relayDTMF', true),
  };
}

function readName(reader: ElementReader): string {
  const name = reader.requiredText('the conference room name');
  const length = [...name].length;
  if (length > CONFERENCE_NAME_MAX_CHARS) {
    throw new AnswerXmlError(
      'Conference',
      `the room name must be at most ${CONFERENCE_NAME_MAX_CHARS} characters, got ${length}`,
    );
  }
  if (/[\u0000-\u001f\u007f/]/.test(name)) {
    throw new AnswerXmlError(
      'Conference',
      `the room name may not hold "/" or control characters, got "${name}"`,
    );
  }
  return name;
}

function readSound(reader: ElementReader, attribute: string): ConferenceSound {
  const value = reader.string(attribute);
  if (value === null) return null;
  if (value === 'beep:1') return { kind: 'beep', count: 1 };
  if (value === 'beep:2') return { kind: 'beep', count: 2 };
  if (isUrl(value, HTTP_PROTOCOLS)) return { kind: 'url', url: value };
  throw new AnswerXmlError(
    'Conference',
    `${attribute} must be "", "beep:1", "beep:2" or an http or https URL, got "${value}"`,
    attribute,
  );
}
