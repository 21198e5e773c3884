import type { SdpCandidate } from './ice-candidate.js';
import type { MediaDirection } from './media-direction.js';
import type { DtlsFingerprint } from './transport-lines.js';
import type { NegotiatedSdes } from './sdes-negotiation.js';
import { isNullAddress, type MediaStream, type PayloadFormat } from './session-description.js';

/** What a WebRTC exchange settled beside the audio: the peer's ICE and DTLS parameters. */
export interface NegotiatedTransport {
  readonly mid: string | null;
  /** The peer's credentials: its ufrag is the second half of the USERNAME of its checks. */
  readonly remoteIce: { readonly ufrag: string; readonly pwd: string };
  readonly remoteIceLite: boolean;
  readonly remoteCandidates: readonly SdpCandidate[];
  /** What the peer's DTLS certificate must hash to (RFC 8122). */
  readonly remoteFingerprints: readonly DtlsFingerprint[];
  /** voxgate's DTLS role: client when its side is a=setup:active, server when passive. */
  readonly dtlsRole: 'client' | 'server';
  /** voxgate's credentials as this exchange wrote them: new ones after an ICE restart. */
  readonly localIce: { readonly ufrag: string; readonly pwd: string };
}

/** What an offer/answer exchange settled for the audio stream, seen from voxgate's side. */
export interface NegotiatedAudio {
  /** Position of the audio stream among the m= lines. */
  readonly streamIndex: number;
  /** Where to send RTP; 0.0.0.0 when the peer put the call on hold the RFC 2543 way. */
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly remoteRtcpPort: number;
  /** The format to send and expect, with the payload type the peer uses for it. */
  readonly codec: PayloadFormat;
  /** The peer's telephone-event format (RFC 4733), null when DTMF must go in band. */
  readonly telephoneEvent: PayloadFormat | null;
  /** Packet duration in ms to send with: the peer's a=ptime, else 20. */
  readonly ptime: number;
  /** voxgate's direction: whether it sends, receives, both or neither. */
  readonly direction: MediaDirection;
  /** The peer does not want to receive: it sent sendonly, inactive or a null address. */
  readonly heldByPeer: boolean;
  /**
   * Present on a WebRTC stream. Media then goes where ICE nominates, not to the c= address.
   */
  readonly transport?: NegotiatedTransport;
  /** Present on an SDES-SRTP stream (RTP/SAVP): the suite and both keys. */
  readonly sdes?: NegotiatedSdes;
}

export const DEFAULT_PTIME = 20;

/**
 * The direction a peer means for a stream. RFC 3264 8.4: a c= address of 0.0.0.0 (RFC 2543
 * hold) says the peer does not want to receive, so sendrecv reads as sendonly. Not with ICE:
 * there c= carries the default candidate, and RFC 8840 4.3.1 writes 0.0.0.0 (port 9) when
 * there is none yet.
 */
export function peerDirection(stream: MediaStream): MediaDirection {
  if (!isNullAddress(stream.address) || stream.transport?.ice) return stream.direction;
  if (stream.direction === 'sendrecv') return 'sendonly';
  if (stream.direction === 'recvonly') return 'inactive';
  return stream.direction;
}

export function isHeldByPeer(stream: MediaStream): boolean {
  const direction = peerDirection(stream);
  return direction === 'sendonly' || direction === 'inactive';
}
