import {
  answerPayload,
  codecOf,
  commonEvents,
  isTelephoneEvent,
  type AudioCodec,
} from './audio-codecs.js';
import { answerDirection, type MediaDirection } from './media-direction.js';
import {
  DEFAULT_PTIME,
  isHeldByPeer,
  peerDirection,
  type NegotiatedAudio,
} from './negotiated-audio.js';
import type { OutgoingStream } from './sdp-writer.js';
import { SDES_PROFILE, type SdesCrypto } from './sdes-crypto.js';
import { answerCrypto, chooseCrypto, type LocalSdes } from './sdes-negotiation.js';
import type { MediaStream, PayloadFormat, SessionDescription } from './session-description.js';
import {
  answerSetup,
  isWebrtcProfile,
  negotiatedTransport,
  outgoingTransport,
  unusableTransport,
  type LocalTransport,
} from './webrtc-transport.js';

/** What voxgate offers or accepts for its one audio stream. */
export interface LocalAudio {
  readonly port: number;
  /** Codecs voxgate can serve, in its order of preference (used when it offers). */
  readonly codecs: readonly AudioCodec[];
  /** Codecs voxgate takes when answering an offer (the offerer's order decides). */
  readonly answerCodecs: readonly AudioCodec[];
  /**
   * The codec the session carries now, on a re-offer: kept while the offer still lists it,
   * whatever its place there, so that a refresh or a hold that lists the codecs in another order
   * does not switch the call's audio to another codec (RFC 3264 leaves the choice to the
   * answerer).
   */
  readonly inUse?: AudioCodec;
  readonly telephoneEvent: boolean;
  readonly ptime: number;
  /** What voxgate wants: sendrecv normally, sendonly to hold the peer. */
  readonly direction: MediaDirection;
  /** Set on a WebRTC leg: it then takes only WebRTC profiles, with ICE, DTLS and rtcp-mux. */
  readonly transport?: LocalTransport;
  /**
   * voxgate's role in the DTLS association in place, on a re-offer of a WebRTC leg: the answer
   * keeps it (the association carries on), whoever offered first.
   */
  readonly dtlsRole?: 'client' | 'server';
  /**
   * Set on a leg that may carry SDES-SRTP (a peer over SIP over TLS): it then takes RTP/SAVP
   * with a=crypto, and plain RTP/AVP too unless SRTP is required.
   */
  readonly sdes?: LocalSdes;
}

export interface AcceptedAnswer {
  readonly ok: true;
  readonly streams: readonly OutgoingStream[];
  readonly audio: NegotiatedAudio;
  /** RFC 8843 7.3: the answer's BUNDLE group holds the accepted mid, if the offer's did. */
  readonly bundle: readonly string[] | null;
}

/** RFC 3261 21.4.26 / RFC 3264 6: an offer none of whose media voxgate can take: answer 488. */
export interface RejectedOffer {
  readonly ok: false;
  readonly status: 488;
  readonly reason: string;
}

const AUDIO_PROFILE = 'RTP/AVP';

function rejected(stream: MediaStream): OutgoingStream {
  // RFC 3264 6: a rejected stream keeps its m= line, with port 0.
  return {
    kind: stream.kind,
    port: 0,
    protocol: stream.protocol,
    formats: stream.formats,
    payloads: [],
    ptime: null,
    direction: null,
    ...(stream.transport === undefined ? {} : { mid: stream.transport.mid }),
  };
}

function pickTelephoneEvent(stream: MediaStream, codec: PayloadFormat): PayloadFormat | null {
  const offered = stream.payloads.filter(isTelephoneEvent);
  const event = offered.find((p) => p.clockRate === codec.clockRate) ?? offered[0];
  if (event === undefined) return null;
  const events = commonEvents(event.fmtp);
  return events === null ? null : { ...event, fmtp: events };
}

function pickCodec(stream: MediaStream, local: LocalAudio): PayloadFormat | null {
  const kept = stream.payloads.find((payload) => codecOf(payload) === local.inUse);
  if (kept !== undefined && local.answerCodecs.includes(local.inUse!)) return kept;
  // RFC 3264 6.1: the offerer lists formats in its order of preference; take the first we serve.
  for (const payload of stream.payloads) {
    const codec = codecOf(payload);
    if (codec !== null && local.answerCodecs.includes(codec)) return payload;
  }
  return null;
}

function isServable(stream: MediaStream, local: LocalAudio): boolean {
  if (stream.kind !== 'audio' || stream.port === 0) return false;
  if (local.transport) return isWebrtcProfile(stream.protocol);
  if (stream.protocol === SDES_PROFILE) return local.sdes !== undefined;
  return stream.protocol === AUDIO_PROFILE && local.sdes?.required !== true;
}

/** The crypto line an RTP/SAVP stream is answered with; none for other profiles. */
function streamCrypto(stream: MediaStream): SdesCrypto | string | null {
  return stream.protocol === SDES_PROFILE ? chooseCrypto(stream) : null;
}

function webrtcSide(stream: MediaStream, local: LocalTransport, role: LocalAudio['dtlsRole']) {
  const setup = answerSetup(stream.transport?.setup ?? null, role);
  return {
    outgoing: { mid: stream.transport?.mid ?? null, transport: outgoingTransport(local, setup) },
    transport: negotiatedTransport(stream.transport!, setup, local),
  };
}

function acceptAudio(
  stream: MediaStream,
  codec: PayloadFormat,
  local: LocalAudio,
  crypto: SdesCrypto | null,
) {
  const event = local.telephoneEvent ? pickTelephoneEvent(stream, codec) : null;
  const direction = answerDirection(peerDirection(stream), local.direction);
  // The peer's fmtp says how it receives; ours (Opus's) says how voxgate does.
  const answered = answerPayload(codec, codecOf(codec)!);
  const payloads = event === null ? [answered] : [answered, event];
  const webrtc = local.transport ? webrtcSide(stream, local.transport, local.dtlsRole) : null;
  const sdes = crypto !== null && local.sdes ? answerCrypto(crypto, local.sdes) : null;
  const outgoing: OutgoingStream = {
    kind: 'audio',
    port: local.port,
    // RFC 8829 5.3.1: the answer takes the offer's profile.
    protocol: stream.protocol,
    formats: payloads.map((p) => String(p.payloadType)),
    payloads,
    ptime: local.ptime,
    direction,
    ...webrtc?.outgoing,
    ...(sdes && { crypto: [sdes.outgoing] }),
  };
  const audio: NegotiatedAudio = {
    streamIndex: stream.index,
    remoteAddress: stream.address ?? '0.0.0.0',
    remotePort: stream.port,
    remoteRtcpPort: stream.rtcpPort,
    codec,
    telephoneEvent: event,
    ptime: stream.ptime ?? DEFAULT_PTIME,
    direction,
    heldByPeer: isHeldByPeer(stream),
    ...(webrtc === null ? {} : { transport: webrtc.transport }),
    ...(sdes && { sdes: sdes.negotiated }),
  };
  return { outgoing, audio };
}

/**
 * Answers an offer (RFC 3264 6): accepts the first audio stream with a codec voxgate serves,
 * rejects every other stream with port 0, and fails with 488 when no audio stream is left. A
 * WebRTC leg (local.transport) takes only WebRTC audio with ICE, DTLS and rtcp-mux.
 */
export function answerStreams(
  offer: SessionDescription,
  local: LocalAudio,
): AcceptedAnswer | RejectedOffer {
  let audio: NegotiatedAudio | null = null;
  let sawAudio = false;
  let transportProblem: string | null = null;
  const streams: OutgoingStream[] = [];
  for (const stream of offer.streams) {
    const servable = audio === null && isServable(stream, local);
    sawAudio ||= servable;
    let codec = servable ? pickCodec(stream, local) : null;
    const problem = codec !== null && local.transport ? unusableTransport(stream) : null;
    const crypto = codec !== null ? streamCrypto(stream) : null;
    if (problem !== null || typeof crypto === 'string') {
      transportProblem ??= problem ?? (crypto as string);
      codec = null;
    }
    if (codec === null) {
      streams.push(rejected(stream));
      continue;
    }
    const accepted = acceptAudio(stream, codec, local, crypto as SdesCrypto | null);
    audio = accepted.audio;
    streams.push(accepted.outgoing);
  }
  if (audio === null) {
    const profile = local.transport
      ? 'WebRTC (UDP/TLS/RTP/SAVPF)'
      : local.sdes?.required
        ? 'RTP/SAVP (SRTP is required on this leg)'
        : local.sdes
          ? 'RTP/AVP or RTP/SAVP'
          : 'RTP/AVP';
    const reason =
      transportProblem ??
      (sawAudio
        ? `no common audio codec (voxgate serves ${local.answerCodecs.join(', ')})`
        : `the offer has no ${profile} audio stream`);
    return { ok: false, status: 488, reason };
  }
  const mid = audio.transport?.mid ?? null;
  const bundle = mid !== null && offer.bundle?.includes(mid) ? [mid] : null;
  return { ok: true, streams, audio, bundle };
}
