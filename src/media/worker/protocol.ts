/**
 * The typed protocol between the main thread and a media worker (DESIGN.md: commands down,
 * events up). Every command carries a request id; the worker answers each with one reply of
 * the same id, except a quiet one, whose success nobody waits for: it is answered only if it
 * fails (`failed`, naming its session). Events are unsolicited and name the session they
 * concern.
 */
import type { OutboundGuardSettings } from '../../core/outbound-guard.js';
import type { DtlsCertificate } from '../dtls/dtls-certificate.js';
import type { WebrtcFailure } from '../webrtc/webrtc-transport.js';
import type { DropSnapshot } from './drop-counts.js';
import type { SpeechVoice } from '../sources/speech.js';
import type { MachineDetectionSettings, MachineVerdict } from '../pipeline/machine-classifier.js';
import type { PlayoutMode } from '../playout/playout-queue.js';
import type { ConferenceCommand, ConferenceResults } from '../conference/conference-commands.js';
import type { RecordingOutcome, RecordingSpec } from '../recording/recording-spec.js';
import type {
  MediaSessionSpec,
  MediaSessionStats,
  MediaSessionUpdate,
  ReceivedDtmf,
} from '../pipeline/session-spec.js';

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
  /** The outbound policy Play's files and stream URLs go through; the default when absent. */
  outbound?: OutboundGuardSettings;
  /**
   * The process's DTLS certificate, handshake and ICE consent timeouts, for WebRTC legs;
   * without it a WebRTC session is refused.
   */
  dtls?: { certificate: DtlsCertificate; handshakeTimeoutMs: number; consentTimeoutMs?: number };
  /**
   * The complexity (0-10) of every Opus encoder of the worker's legs (VOXGATE_OPUS_COMPLEXITY);
   * by the band coded when absent.
   */
  opusComplexity?: number;
}

/** Audio to play into a call leg. */
export type PlaySource =
  | {
      kind: 'speech';
      text: string;
      voice: SpeechVoice;
      language: string;
      /** The text with its SSML markup, spoken instead of `text` when given. */
      ssml?: string;
    }
  | { kind: 'file'; url: string }
  | { kind: 'tone'; frequencies: number[]; durationMs: number };

import type { LatencySnapshot } from './latency-counts.js';

export interface CreateSession {
  type: 'createSession';
  sessionId: string;
  spec: MediaSessionSpec;
  /** An RTP port this worker announced as bound and ready (its RTCP is the next one). */
  port?: number;
}

/**
 * One audio stream to fork from a session to a WebSocket server (wire-compat.md, Audio stream
 * WebSocket protocol). The main thread has validated it and signed the upgrade request.
 */
export interface StreamForkSpec {
  streamId: string;
  callId: string;
  accountId: string;
  serviceUrl: string;
  /** Headers of the upgrade request (the signature among them). */
  headers: Record<string, string>;
  /** Sent as is on every event; '' when none. */
  extraHeaders: string;
  tracks: ('inbound' | 'outbound')[];
  encoding: 'l16' | 'mulaw';
  rate: 8000 | 16000 | 24000;
  bidirectional: boolean;
  /** The stream ends with `timeout` this long after it connected. */
  timeoutMs: number;
  noiseCancellationLevel: number | null;
  /** Bytes that may wait unsent before the stream is dropped (default 1 MiB). */
  sendBufferBytes?: number;
}

export interface StartStream {
  type: 'startStream';
  sessionId: string;
  stream: StreamForkSpec;
}

export interface StopStream {
  type: 'stopStream';
  sessionId: string;
  streamId: string;
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
  /** Names what plays, so that stopPlayback can stop it alone. */
  tag?: string;
}

export interface StopPlayback {
  type: 'stopPlayback';
  sessionId: string;
  /** Stops only what was played with this tag; everything when absent. */
  tag?: string;
}

export interface SendDigits {
  type: 'sendDigits';
  sessionId: string;
  digits: string;
  toneMs?: number;
}

/** Answer XML Wait with silence: waits for the far end to be quiet for silenceMs, at most maxMs. */
export interface WaitForSilence {
  type: 'waitForSilence';
  sessionId: string;
  silenceMs: number;
  maxMs: number;
}

/** Ends once the far end plays a voicemail beep (true), or after maxMs (false). */
export interface WaitForBeep {
  type: 'waitForBeep';
  sessionId: string;
  maxMs: number;
}

/**
 * Answering-machine detection on what the far end says from now (the answer): resolves with
 * the verdict, `unknown` with reason call-ended when the session closes first.
 */
export interface DetectMachine {
  type: 'detectMachine';
  sessionId: string;
  settings: MachineDetectionSettings;
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

/** Records a session into a new WAV file as its audio passes (src/media/recording). */
export interface StartRecording {
  type: 'startRecording';
  sessionId: string;
  recording: RecordingSpec;
}

/** Stops one recording of a session, or all of them when no id is given. */
export interface StopRecording {
  type: 'stopRecording';
  sessionId: string;
  recordingId?: string;
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
  | StartStream
  | StopStream
  | SendDigits
  | WaitForSilence
  | WaitForBeep
  | DetectMachine
  | Bridge
  | Unbridge
  | StartRecording
  | StopRecording
  | SessionStats
  | DestroySession
  | Stats
  | ConferenceCommand;

/** What each command resolves to. */
export interface Results extends ConferenceResults {
  createSession: { sessionId: string; port: number; rtcpPort: number };
  updateSession: { sessionId: string };
  /** Resolves when the audio ends: completed false when it was stopped. */
  play: { completed: boolean };
  stopPlayback: { sessionId: string };
  /** Resolves at once: how the connection goes is told by `stream` events. */
  startStream: { streamId: string };
  /** existed is false when the stream had already ended (or never was). */
  stopStream: { streamId: string; existed: boolean };
  /** Resolves when the last digit has gone out: completed false when stopped. */
  sendDigits: { completed: boolean };
  /** silent is false when maxMs passed first, or the session closed. */
  waitForSilence: { silent: boolean };
  waitForBeep: { beeped: boolean };
  detectMachine: MachineVerdict;
  bridge: { sessionId: string; peerId: string };
  unbridge: { sessionId: string; bridged: boolean };
  /** Resolves when the recording ends: failed when its file could not be written. */
  startRecording: RecordingOutcome;
  stopRecording: { stopped: number };
  sessionStats: MediaSessionStats;
  destroySession: { sessionId: string; existed: boolean; stats: MediaSessionStats | null };
  /**
   * heapUsed is the worker's own JavaScript heap; processRss is the whole process's resident
   * memory (a thread cannot measure its own), the same figure from every worker.
   */
  stats: { sessions: number; heapUsed: number; processRss: number };
}

/** The commands that may be sent quietly: they name the session a failure concerns. */
export type QuietCommand = Extract<Command, { type: 'createSession' | 'destroySession' }>;

export type Request =
  (Command & { id: number; quiet?: undefined }) | (QuietCommand & { id: number; quiet: true });

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
  | { type: 'ended'; cause: string }
  /** A WebRTC leg's transport ended: ICE consent lost, DTLS failed, or the peer closed it. */
  | { type: 'transportFailed'; kind: WebrtcFailure['kind']; message: string }
  /**
   * The member took the floor of the conference mixed on this worker (ConferenceFloor); sent
   * by the mixing worker, which for a linked member is not the worker of its session.
   */
  | { type: 'conferenceFloor'; conferenceId: string }
  /** A stream fork's news: see StreamNews. */
  | ({ type: 'stream'; streamId: string } & StreamNews);

/**
 * What happened to a stream: connected; degraded (its send buffer passed `percent` of its
 * bound); ended as stopped (asked to, or the session closed), timeout, failed (never
 * connected, or the server closed or broke the connection) or dropped (the server did not
 * read fast enough and the send buffer overflowed). `message` says why in words.
 */
export type StreamNews =
  | { state: 'connected' }
  | { state: 'degraded'; percent: 30 | 60 | 90 }
  | { state: 'stopped' | 'timeout' | 'failed' | 'dropped'; message: string; connectedMs: number };

export type WorkerEvent = { kind: 'event'; sessionId: string; event: SessionEvent };

/** RTP ports a worker has bound ahead: each is the main thread's to reserve, once. */
export type PortsReady = { kind: 'ports'; ports: number[] };

/** Stream latencies a worker observed since its last report (about every second). */
export type LatencyReport = {
  kind: 'latency';
  /** RTP packet arrival to its stream media event sent. */
  inbound: LatencySnapshot;
  /** playAudio received to its first sample sent as RTP. */
  playout: LatencySnapshot;
  /** What WebRTC legs dropped (SRTP) or turned down (ICE), by reason, when anything was. */
  drops?: DropSnapshot;
};

/** A quiet command failed. */
export type QuietFailure = {
  kind: 'failed';
  command: QuietCommand['type'];
  sessionId: string;
  error: string;
};

export type WorkerMessage = Reply | WorkerEvent | PortsReady | LatencyReport | QuietFailure;
