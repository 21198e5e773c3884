import type { Scheduler } from '../../core/scheduler.js';
import type {
  WebrtcEnvironment,
  WebrtcFailure,
  WebrtcTransportSpec,
  WebrtcTransportStats,
  WebrtcUpdate,
} from '../webrtc/webrtc-transport.js';
import type {
  SdesKeys,
  SdesMode,
  SdesProtectionStats,
  SrtpDropTally,
} from '../srtp/sdes-protection.js';
import { noiseSuppressionLevel } from '../codec/noise-suppressor.js';
import type { DtmfDigit } from '../dtmf/dtmf-digit.js';
import type { FrameClock } from '../playout/frame-clock.js';
import type { PairSource } from '../rtp/port-range.js';
import type { MediaAddress } from '../rtp/rtp-session.js';
import type { AudioFormat, CodecSettings } from './audio-format.js';
import { InboundPath, type InboundPacket, type InboundStats } from './inbound-path.js';

/*
 * What a media session is asked to be and what it reports: its spec and updates, the events
 * it raises, its statistics and its taps. The session itself is in media-session.ts.
 */

/** SDP's direction attribute, from this side's point of view. */
export type MediaDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

export interface TelephoneEventFormat {
  payloadType: number;
  rate: number;
}

/** What a call leg's media is, as offer/answer settled it. */
export interface MediaSessionSpec {
  /** Audio formats the peer may send; the first is the one this side sends. */
  formats: AudioFormat[];
  telephoneEvent?: TelephoneEventFormat | null;
  /** Where to send until the peer's own RTP is seen (symmetric RTP latches onto that). */
  remote?: MediaAddress | null;
  direction?: MediaDirection;
  /** 60-100: noise suppression on the audio received, at that strength. */
  noiseCancellationLevel?: number;
  /** Listen for DTMF tones in the audio received (8 kHz calls whose peer has no telephone-event). */
  inbandDtmf?: boolean;
  /** No RTP for this long raises onMediaTimeout (not while the peer is not meant to send). */
  mediaTimeoutMs?: number;
  /**
   * A WebRTC leg: ICE-lite, DTLS-SRTP and RTCP on the RTP port; `remote` is then unused (ICE
   * selects where media goes).
   */
  webrtc?: WebrtcTransportSpec;
  /**
   * An SDES-SRTP leg (a peer over SIP over TLS): its RTP and RTCP are SRTP once an update
   * gives the keys; before that `required` lets nothing through, `optional` plain RTP.
   */
  sdes?: SdesMode;
}

/** What a re-INVITE may change; the call's rate stays. */
export type MediaSessionUpdate = Partial<
  Pick<MediaSessionSpec, 'formats' | 'telephoneEvent' | 'remote' | 'direction'>
> & {
  /**
   * A WebRTC leg's peer transport, once its SDP is in, and our credentials after a restart.
   * null: the answer is plain RTP after all (a desk phone offered the same port beside a
   * browser), and the session goes on without its WebRTC transport.
   */
  webrtc?: WebrtcUpdate | null;
  /** An SDES leg's keys as offer/answer settled them; null: plain RTP (optional SRTP only). */
  sdes?: SdesKeys | null;
};

/** What a worker gives each of its sessions. */
export interface MediaEnvironment {
  allocator: PairSource;
  clock: FrameClock;
  cname: string;
  scheduler?: Scheduler;
  /** What WebRTC legs need: the worker's DTLS context (made on first use) and its tally. */
  webrtc?: WebrtcEnvironment;
  /** Where SDES legs count the SRTP packets they drop (the worker's /metrics tally). */
  srtpTally?: SrtpDropTally;
  /** How the legs code what they send (the Opus encoder's complexity); libopus's defaults when absent. */
  codecs?: CodecSettings;
}

export interface ReceivedDtmf {
  digit: DtmfDigit;
  source: 'rfc4733' | 'inband';
  /** Known for RFC 4733 events. */
  durationMs?: number;
}

export interface MediaSessionListener {
  onDigit?(digit: ReceivedDtmf): void;
  onMediaTimeout?(silentForMs: number): void;
  onLatched?(rtp: MediaAddress): void;
  /** A WebRTC leg's transport ended (consent lost, DTLS failed or closed): the call ends. */
  onTransportFailed?(failure: WebrtcFailure): void;
  onError?(error: Error): void;
}

export interface MediaSessionStats {
  port: number;
  packetsSent: number;
  octetsSent: number;
  packetsReceived: number;
  malformed: number;
  foreign: number;
  inbound: InboundStats;
  /** Relayed packets this leg could not send (an encoding it did not negotiate). */
  relayDropped: number;
  /** A WebRTC leg's transport: ICE and DTLS states, SRTP drops. */
  webrtc?: WebrtcTransportStats;
  /** An SDES leg's SRTP: whether keyed, and what it dropped. */
  sdes?: SdesProtectionStats;
}

/** Audio heard on the leg, 20 ms at a time at the call's rate. */
export type AudioTap = (frame: Int16Array) => void;

/**
 * Each packet's audio as it arrives, decoded at the call's rate, before any jitter buffer:
 * for forks that forward at once. `arrivedAt` is performance.now() when it was received.
 */
export type PacketTap = (pcm: Int16Array, packet: InboundPacket, arrivedAt: number) => void;

/** Throws what is wrong with a session spec, as opening the session would, but binds nothing. */
export function checkSessionSpec(spec: MediaSessionSpec): void {
  if (spec.formats.length === 0) throw new Error('Expected at least one audio format');
  new InboundPath({ rate: spec.formats[0]!.rate, formats: spec.formats });
  if (spec.noiseCancellationLevel !== undefined) noiseSuppressionLevel(spec.noiseCancellationLevel);
}
