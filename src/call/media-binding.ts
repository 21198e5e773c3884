import type { AudioFormat } from '../media/pipeline/audio-format.js';
import type { MediaSessionSpec, MediaSessionUpdate } from '../media/pipeline/session-spec.js';
import { parseOpusParameters, type NegotiatedAudio } from '../sip/sdp/index.js';
import { sdesKeysOf } from './srtp-policy.js';
import { peerTransport } from './webrtc-support.js';

/** What a leg's media starts as, before offer/answer settles: PCMU or PCMA at 8 kHz. */
export const INITIAL_MEDIA: MediaSessionSpec = {
  formats: [
    { encoding: 'PCMU', payloadType: 0, rate: 8000 },
    { encoding: 'PCMA', payloadType: 8, rate: 8000 },
  ],
  telephoneEvent: { payloadType: 101, rate: 8000 },
  direction: 'sendrecv',
};

/** No RTP for this long from a peer meant to send ends the call (6020 Media Timeout). */
export const MEDIA_TIMEOUT_MS = 60_000;

/**
 * What SDP offer/answer settled, as the media session takes it: the codec to send and expect
 * (with the peer's payload type), telephone-event, where to send, and the direction.
 */
export function mediaUpdateFrom(audio: NegotiatedAudio): MediaSessionUpdate {
  const encoding = audio.codec.encoding.toUpperCase();
  if (encoding === 'OPUS') return { ...sessionUpdate(audio), formats: [opusFormat(audio)] };
  if (encoding !== 'PCMU' && encoding !== 'PCMA' && encoding !== 'L16') {
    throw new Error(`negotiated a codec the media plane does not carry: ${audio.codec.encoding}`);
  }
  const format: AudioFormat = {
    encoding,
    payloadType: audio.codec.payloadType,
    rate: audio.codec.clockRate as AudioFormat['rate'],
  };
  return { ...sessionUpdate(audio), formats: [format] };
}

/** The bitrate an Opus leg sends at: wideband speech, unless the peer wants less. */
export const OPUS_BITRATE = 24000;

/**
 * An Opus leg runs at 16 kHz: the highest rate a stream carries and what speech recognisers
 * take, so no stream pays for resampling; 8 kHz when the peer neither plays nor captures
 * above it (RFC 7587 7.1's maxplaybackrate and sprop-maxcapturerate), since nothing above
 * 4 kHz would ever flow. It sends FEC and DTX as the peer's fmtp asks.
 */
function opusFormat(audio: NegotiatedAudio): AudioFormat {
  const peer = parseOpusParameters(audio.codec.fmtp);
  const narrow = peer.maxPlaybackRate <= 8000 && peer.maxCaptureRate <= 8000;
  const bitrate = Math.max(6000, Math.min(OPUS_BITRATE, peer.maxAverageBitrate ?? OPUS_BITRATE));
  return {
    encoding: 'opus',
    payloadType: audio.codec.payloadType,
    rate: narrow ? 8000 : 16000,
    opus: { bitrate, fec: peer.useInbandFec, dtx: peer.useDtx },
  };
}

function sessionUpdate(audio: NegotiatedAudio): MediaSessionUpdate {
  return {
    // A WebRTC leg's media goes where ICE selects, keyed by DTLS with the peer's certificate.
    ...(audio.transport && { webrtc: peerTransport(audio.transport) }),
    // An SDES leg's SRTP: the peer's a=crypto key in, ours out. A plain RTP/AVP stream drops
    // the keys (an optional-SRTP peer re-INVITEd to plain RTP: its audio is plain from then on;
    // a leg that requires SRTP never settles on RTP/AVP, and other legs have none to drop).
    ...(!audio.transport && { sdes: audio.sdes ? sdesKeysOf(audio.sdes) : null }),
    telephoneEvent: audio.telephoneEvent
      ? { payloadType: audio.telephoneEvent.payloadType, rate: audio.telephoneEvent.clockRate }
      : null,
    remote:
      audio.remotePort > 0 && audio.remoteAddress !== '0.0.0.0'
        ? { address: audio.remoteAddress, port: audio.remotePort }
        : null,
    direction: audio.direction,
  };
}
