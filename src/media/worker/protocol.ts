/**
 * The typed protocol between the main thread and a media worker (DESIGN.md: commands down,
 * events up). Every command carries a request id; the worker answers each with one reply of
 * the same id. Events are unsolicited and name the session they concern.
 */
import type { SpeechVoice } from '../sources/speech.js';
import type { PlayoutMode } from '../playout/playout-queue.js';
import type {
  MediaSessionSpec,
  MediaSessionStats,
  MediaSessionUpdate,
  ReceivedDtmf,
} from '../pipeline/media-session.js';

/** What a worker needs from the main thread when it starts (its workerData). */
export interface WorkerSettings {
  /** RTP ports, even for RTP with RTCP on the next (VOXGATE_RTP_PORTS). */
  rtpPorts: { min: number; max: number };
  /** Address the RTP sockets bind to. */
  rtpHost: string;
  /** RTCP CNAME of the gateway's streams. */
  cname: string;
  /** Largest audio file Play fetches, in octets. */
  maxFileBytes?: number;
}

/** Audio to play into a call leg. */
export type PlaySource =
  | { kind: 'speech'; text: string; voice: SpeechVoice; language: string }
  | { kind: 'file'; url: string }
  | { kind: 'tone'; frequencies: number[]; durationMs: number };

export interface CreateSession {
  type: 'createSession';
  sessionId: string;
  spec: MediaSessionSpec;
  /** An RTP port this worker announced as bound and ready (its RTCP is the next one). */
  port?: number;
}

export interface UpdateSession {
  type: 'updateSession';
  sessionId: string;
  changes: MediaSessionUpdate;
}

export interface Play {
  type: 'play';
  sessionId: string;
  source: PlaySource;
  mode?: PlayoutMode;
  loop?: boolean;
}

export interface StopPlayback {
  type: 'stopPlayback';
  sessionId: string;
}

export interface SendDigits {
  type: 'sendDigits';
  sessionId: string;
  digits: string;
  toneMs?: number;
}

export interface Bridge {
  type: 'bridge';
  sessionId: string;
  peerId: string;
  /**
   * `mix` (default) decodes each leg and plays it into the other, so other audio can mix
   * in; `relay` forwards the RTP undecoded, for legs that share a codec.
   */
  mode?: 'mix' | 'relay';
}

export interface Unbridge {
  type: 'unbridge';
  sessionId: string;
}

export interface SessionStats {
  type: 'sessionStats';
  sessionId: string;
}

export interface DestroySession {
  type: 'destroySession';
  sessionId: string;
  reason?: string;
}

export interface Stats {
  type: 'stats';
}

export type Command =
  | CreateSession
  | UpdateSession
  | Play
  | StopPlayback
  | SendDigits
  | Bridge
  | Unbridge
  | SessionStats
  | DestroySession
  | Stats;

/** What each command resolves to. */
export interface Results {
  createSession: { sessionId: string; port: number; rtcpPort: number };
  updateSession: { sessionId: string };
  /** Resolves when the audio ends: completed false when it was stopped. */
  play: { completed: boolean };
  stopPlayback: { sessionId: string };
  /** Resolves when the last digit has gone out: completed false when stopped. */
  sendDigits: { completed: boolean };
  bridge: { sessionId: string; peerId: string };
  unbridge: { sessionId: string; bridged: boolean };
  sessionStats: MediaSessionStats;
  destroySession: { sessionId: string; existed: boolean; stats: MediaSessionStats | null };
  /**
   * heapUsed is the worker's own JavaScript heap; processRss is the whole process's resident
   * memory (a thread cannot measure its own), the same figure from every worker.
   */
  stats: { sessions: number; heapUsed: number; processRss: number };
}

export type Request = Command & { id: number };

export type Reply =
  | { kind: 'reply'; id: number; ok: true; result: Results[Command['type']] }
  | { kind: 'reply'; id: number; ok: false; error: string };

/** Events a session raises. */
export type SessionEvent =
  | ({ type: 'dtmf' } & ReceivedDtmf)
  | { type: 'mediaTimeout'; silentForMs: number }
  | { type: 'latched'; address: string; port: number }
  /** Something went wrong that did not end the session (a socket error, a bad tap). */
  | { type: 'warning'; message: string }
  | { type: 'ended'; cause: string };

export type WorkerEvent = { kind: 'event'; sessionId: string; event: SessionEvent };

/** RTP ports a worker has bound ahead: each is the main thread's to reserve, once. */
export type PortsReady = { kind: 'ports'; ports: number[] };

export type WorkerMessage = Reply | WorkerEvent | PortsReady;
