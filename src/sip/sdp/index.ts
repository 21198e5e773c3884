export {
  AUDIO_CODECS,
  DEFAULT_ANSWER_CODECS,
  DEFAULT_AUDIO_CODECS,
  DEFAULT_WEBRTC_CODECS,
  OPUS_FMTP,
  type AudioCodec,
} from './audio-codecs.js';
export {
  formatCandidate,
  hostCandidate,
  parseCandidate,
  type SdpCandidate,
} from './ice-candidate.js';
export { parseOpusParameters, type OpusParameters } from './opus-parameters.js';
export { answerDirection, reverseDirection, type MediaDirection } from './media-direction.js';
export type { NegotiatedAudio, NegotiatedTransport } from './negotiated-audio.js';
export type { NegotiatedSdes } from './sdes-negotiation.js';
export type { RejectedOffer } from './sdp-answerer.js';
export type { RejectedAudio } from './answer-reading.js';
export { SdpParseError } from './sdp-parse-error.js';
export {
  SdpSession,
  type AcceptedOffer,
  type AnswerOutcome,
  type AnswerReading,
  type OfferOptions,
  type SdpSessionOptions,
  type WebrtcSessionOptions,
} from './sdp-session.js';
export { sessionChanges, type SessionChange } from './session-change.js';
export {
  isNullAddress,
  parseSessionDescription,
  type MediaStream,
  type PayloadFormat,
  type SdpOrigin,
  type SessionDescription,
  type StreamTransport,
} from './session-description.js';
export type { DtlsFingerprint, DtlsSetup } from './transport-lines.js';
export { isWebrtcProfile, WEBRTC_PROFILE } from './webrtc-transport.js';
