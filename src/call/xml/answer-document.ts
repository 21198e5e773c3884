import type { SpeakLanguage, SpeakVoice } from './speak-voices.js';
import type { ConferenceInstruction } from './conference-instruction.js';
import type { RecordInstruction } from './record-instruction.js';

/**
 * The validated instructions of one answer XML document, with every default applied. Property
 * names are the XML attribute names; the element's text has a name saying what it is (`url`,
 * `number`, `uri`). Times are in seconds unless the name or comment says otherwise.
 */
export interface AnswerDocument {
  readonly instructions: readonly ResponseInstruction[];
}

export type HttpMethod = 'GET' | 'POST';

export interface SpeakInstruction {
  readonly kind: 'Speak';
  readonly voice: SpeakVoice;
  readonly language: SpeakLanguage;
  /** Times to speak; 0 = until something else ends it. */
  readonly loop: number;
  /** The element's content as written, SSML markup and entities included. */
  readonly ssml: string;
  /** The words alone: markup removed, entities decoded, whitespace collapsed. */
  readonly text: string;
}

export interface PlayInstruction {
  readonly kind: 'Play';
  /** http(s) URL of a wav or mp3 file. */
  readonly url: string;
  /** Times to play; 0 = until something else ends it. */
  readonly loop: number;
}

export interface WaitInstruction {
  readonly kind: 'Wait';
  readonly length: number;
  /** End the wait early once the caller has been silent for minSilence. */
  readonly silence: boolean;
  /** Milliseconds. */
  readonly minSilence: number;
  readonly beep: boolean;
}

export interface HangupInstruction {
  readonly kind: 'Hangup';
  /** Seconds from now; 0 = at once. When above 0, the next element runs meanwhile. */
  readonly schedule: number;
  /** How an unanswered call is refused; null = normal hangup. */
  readonly reason: 'rejected' | 'busy' | null;
}

export interface RedirectInstruction {
  readonly kind: 'Redirect';
  readonly url: string;
  readonly method: HttpMethod;
}

export interface DtmfInstruction {
  readonly kind: 'DTMF';
  /** 0-9, *, #, A-D; `w` waits 0.5 s and `W` 1 s. */
  readonly digits: string;
  readonly async: boolean;
}

export type PromptInstruction = SpeakInstruction | PlayInstruction | WaitInstruction;

export interface GetDigitsInstruction {
  readonly kind: 'GetDigits';
  /** null: no callback; the next element runs after the digits are collected. */
  readonly action: string | null;
  readonly method: HttpMethod;
  readonly timeout: number;
  readonly digitTimeout: number;
  /** null: no key ends the input (written as "" or "none"). */
  readonly finishOnKey: string | null;
  readonly numDigits: number;
  readonly retries: number;
  readonly invalidDigitsSound: string | null;
  readonly validDigits: string;
  readonly playBeep: boolean;
  readonly redirect: boolean;
  readonly prompts: readonly PromptInstruction[];
}

export type GetInputType = 'dtmf' | 'speech' | 'dtmf speech';

export interface GetInputInstruction {
  readonly kind: 'GetInput';
  readonly action: string;
  readonly method: HttpMethod;
  readonly inputType: GetInputType;
  readonly executionTimeout: number;
  readonly digitEndTimeout: number | 'auto';
  readonly finishOnKey: string | null;
  readonly numDigits: number;
  readonly prompts: readonly PromptInstruction[];
}

export interface DialNumber {
  readonly kind: 'Number';
  /** As written: digits with an optional leading +, never converted to a number. */
  readonly number: string;
  readonly sendDigits: string | null;
  readonly sendOnPreanswer: boolean;
  readonly callerId: string | null;
  readonly callerName: string | null;
}

export interface DialUser {
  readonly kind: 'User';
  /** A sip: URI. */
  readonly uri: string;
  readonly sendDigits: string | null;
  readonly sipHeaders: Readonly<Record<string, string>>;
}

export type DialTarget = DialNumber | DialUser;

export interface DialInstruction {
  readonly kind: 'Dial';
  readonly action: string | null;
  readonly method: HttpMethod;
  /** Seconds to ring; null = no Dial-specific limit. */
  readonly timeout: number | null;
  readonly hangupOnStar: boolean;
  readonly timeLimit: number;
  readonly callerId: string | null;
  readonly callerName: string | null;
  readonly confirmSound: string | null;
  readonly confirmKey: string | null;
  /** `real` or an http(s) URL. */
  readonly dialMusic: string;
  readonly redirect: boolean;
  readonly callbackUrl: string | null;
  readonly callbackMethod: HttpMethod;
  readonly digitsMatch: readonly string[];
  readonly sipHeaders: Readonly<Record<string, string>>;
  /** Called in parallel; the first to answer is bridged. Never empty. */
  readonly targets: readonly DialTarget[];
}

export const STREAM_AUDIO_TRACKS = ['inbound', 'outbound', 'both'] as const;
export type StreamAudioTrack = (typeof STREAM_AUDIO_TRACKS)[number];

export { STREAM_CONTENT_TYPES, type StreamContentType } from '../streams/stream-request.js';
import type { StreamContentType } from '../streams/stream-request.js';

export interface StreamInstruction {
  readonly kind: 'Stream';
  /** ws:// or wss:// URL. */
  readonly url: string;
  readonly bidirectional: boolean;
  readonly audioTrack: StreamAudioTrack;
  readonly streamTimeout: number;
  readonly statusCallbackUrl: string | null;
  readonly statusCallbackMethod: HttpMethod;
  readonly contentType: StreamContentType;
  readonly extraHeaders: Readonly<Record<string, string>>;
  /** When true, the next element runs only after the stream ends. */
  readonly keepCallAlive: boolean;
  readonly noiseCancellation: boolean;
  readonly noiseCancellationLevel: number;
}

/** Elements the API defines that are accepted as XML but not interpreted here. */
export const UNSUPPORTED_ELEMENTS = ['Message', 'MultiPartyCall'] as const;

export interface UnsupportedInstruction {
  readonly kind: (typeof UNSUPPORTED_ELEMENTS)[number];
  /** Attributes as written, unchecked. */
  readonly attributes: Readonly<Record<string, string>>;
  /** Trimmed text content (a Message body), '' when none. */
  readonly text: string;
}

export type PreAnswerChild =
  | SpeakInstruction
  | PlayInstruction
  | WaitInstruction
  | GetDigitsInstruction
  | RedirectInstruction
  | DtmfInstruction
  | (UnsupportedInstruction & { readonly kind: 'Message' });

export interface PreAnswerInstruction {
  readonly kind: 'PreAnswer';
  /** Run as early media, before the call is answered. */
  readonly instructions: readonly PreAnswerChild[];
}

export type ResponseInstruction =
  | SpeakInstruction
  | PlayInstruction
  | WaitInstruction
  | HangupInstruction
  | RedirectInstruction
  | DtmfInstruction
  | GetDigitsInstruction
  | GetInputInstruction
  | DialInstruction
  | StreamInstruction
  | ConferenceInstruction
  | PreAnswerInstruction
  | RecordInstruction
  | UnsupportedInstruction;
