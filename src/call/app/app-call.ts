import type { FetchedDocument } from '../../callbacks/index.js';
import type { PlaySource } from '../../media/worker/protocol.js';
import type { LegEnd } from '../legs/leg-end.js';
import type { DigitCollector } from './digit-collector.js';
import type { DialInstruction } from '../xml/answer-document.js';
import type { ConferenceInstruction } from '../xml/conference-instruction.js';

export type HttpMethod = 'GET' | 'POST';

/** What an answer-XML application does to its call (the call layer implements it). */
import type { StreamRequest } from '../streams/stream-request.js';
import type { RecordingRequest, StartedRecording } from '../recordings/call-recordings.js';

export interface AppCall {
  readonly uuid: string;
  readonly direction: 'inbound' | 'outbound';
  /** True once the call has ended; the application stops at its next step. */
  readonly over: boolean;
  /** True once the call is answered (outbound calls always are when their app runs). */
  readonly answered: boolean;
  /** Parameters sent with every request the application makes (CallUUID, From, To...). */
  requestParams(): Record<string, string>;
  /** A signed request to the customer's application whose body is wanted. */
  fetch(url: string, method: HttpMethod, params: Record<string, string>): Promise<FetchedDocument>;
  /** A signed callback whose answer is not needed (an action with redirect="false"). */
  notify(url: string, method: HttpMethod, params: Record<string, string>): void;
  /** Answers an inbound call that is not answered yet (200 OK); nothing for outbound. */
  answer(): void;
  /** Early media on an inbound call (183 with SDP). */
  earlyMedia(): void;
  play(source: PlaySource, options: { loop?: boolean; mix?: boolean }): Promise<boolean>;
  stopPlayback(): Promise<void>;
  sendDigits(digits: string): Promise<boolean>;
  /** Resolves once the caller has been quiet for silenceMs, or after maxMs (false). */
  waitForSilence(silenceMs: number, maxMs: number): Promise<boolean>;
  /** Resolves once the far end has played a voicemail beep (true), or after maxMs (false). */
  waitForBeep(maxMs: number): Promise<boolean>;
  /** Starts keeping the caller's digits; collect() reads them. */
  digits: DigitCollector;
  hangup(end: LegEnd): Promise<void>;
  /** Dials out and bridges; resolves with the action parameters once the B leg is over. */
  dial?(instruction: DialInstruction): Promise<Record<string, string>>;
  /**
   * Joins a conference room; resolves with the action parameters once the member has left,
   * or null when it was refused (maxMembers reached): the document goes on.
   */
  conference?(instruction: ConferenceInstruction): Promise<Record<string, string> | null>;
  /** Forks the call's audio to a WebSocket server; `ended` settles when the stream is over. */
  stream?(request: StreamRequest): Promise<{ streamId: string; ended: Promise<void> }>;
  /** Records the call (the Record element); resolves once the recording runs. */
  record?(request: RecordingRequest): Promise<StartedRecording>;
  /** Runs `run` once the next Dial's B leg is connected. */
  onDialAnswer?(run: () => void): void;
  /** Hears every digit the caller presses until the returned function is called. */
  onDigit?(listener: (digit: string) => void): () => void;
  log(message: string, fields?: Record<string, unknown>): void;
}
