import type { AudioFormat } from '../media/pipeline/audio-format.js';
import type { MediaSessionSpec, MediaSessionUpdate } from '../media/pipeline/session-spec.js';
import type { NegotiatedAudio } from '../sip/sdp/index.js';

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
  if (encoding !== 'PCMU' && encoding !== 'PCMA' && encoding !== 'L16') {
    throw new Error(`negotiated a codec the media plane does not carry: ${audio.codec.encoding}`);
  }
  const format: AudioFormat = {
    encoding,
    payloadType: audio.codec.payloadType,
    rate: audio.codec.clockRate as AudioFormat['rate'],
  };
  return {
    formats: [format],
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
