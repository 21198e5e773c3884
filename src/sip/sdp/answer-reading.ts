import { codecOf, isTelephoneEvent } from './audio-codecs.js';
import { answerDirection } from './media-direction.js';
import {
  DEFAULT_PTIME,
  isHeldByPeer,
  peerDirection,
  type NegotiatedAudio,
} from './negotiated-audio.js';
import { SdpParseError } from './sdp-parse-error.js';
import type { OutgoingStream } from './sdp-writer.js';
import type { SessionDescription } from './session-description.js';
import { answeredTransport } from './webrtc-transport.js';
import { answeredCrypto } from './sdes-negotiation.js';

export interface AcceptedAudio {
  readonly ok: true;
  readonly audio: NegotiatedAudio;
}

/** The peer answered our offer but turned the audio stream down (port 0). */
export interface RejectedAudio {
  readonly ok: false;
  readonly reason: string;
}

function sameFormat(a: { encoding: string; clockRate: number }, b: typeof a): boolean {
  return a.encoding.toLowerCase() === b.encoding.toLowerCase() && a.clockRate === b.clockRate;
}

/**
 * Reads the answer to an offer of ours (RFC 3264 6, 7). Answers that break the rules (another
 * number of m= lines, a codec we did not offer) fail with an SdpParseError.
 */
export function readAnswerStreams(
  offered: readonly OutgoingStream[],
  answer: SessionDescription,
): AcceptedAudio | RejectedAudio {
  // RFC 3264 6: the answer MUST contain exactly the same number of m= lines as the offer.
  if (answer.streams.length !== offered.length) {
    throw new SdpParseError(
      `the answer has ${answer.streams.length} m= lines but the offer had ${offered.length}`,
    );
  }
  const streamIndex = offered.findIndex((stream) => stream.kind === 'audio' && stream.port !== 0);
  const ours = offered[streamIndex];
  const stream = answer.streams[streamIndex];
  if (ours === undefined || stream === undefined) {
    throw new SdpParseError('the offer had no audio stream to answer');
  }
  if (stream.kind !== 'audio') {
    throw new SdpParseError(`the answer put ${stream.kind} where the offer had audio`);
  }
  if (stream.port === 0) return { ok: false, reason: 'the answer rejected the audio stream' };
  const secured = ours.transport !== undefined || ours.crypto !== undefined;
  // RFC 4568 7.1.3 / RFC 8842 5.3: a secure offer is not answered with another profile.
  if (secured && stream.protocol.toUpperCase() !== ours.protocol) {
    throw new SdpParseError(
      `the answer has ${stream.protocol} where the offer had ${ours.protocol}`,
    );
  }
  const transport = ours.transport === undefined ? null : answeredTransport(stream, ours.transport);
  const sdes = ours.crypto === undefined ? null : answeredCrypto(ours.crypto, stream);
  const codecs = ours.payloads.filter((payload) => codecOf(payload) !== null);
  const codec = stream.payloads.find((payload) => codecOf(payload) !== null);
  if (codec === undefined || !codecs.some((offeredCodec) => sameFormat(offeredCodec, codec))) {
    const chosen = stream.payloads[0];
    throw new SdpParseError(
      `the answer chose ${chosen === undefined ? 'no format' : `${chosen.encoding}/${chosen.clockRate}`}, which was not offered`,
    );
  }
  const event = stream.payloads.find(isTelephoneEvent) ?? null;
  return {
    ok: true,
    audio: {
      streamIndex,
      remoteAddress: stream.address ?? '0.0.0.0',
      remotePort: stream.port,
      remoteRtcpPort: stream.rtcpPort,
      codec,
      telephoneEvent: ours.payloads.some(isTelephoneEvent) ? event : null,
      ptime: stream.ptime ?? DEFAULT_PTIME,
      // What the peer will receive and send, narrowed to what we offered to do.
      direction: answerDirection(peerDirection(stream), ours.direction ?? 'sendrecv'),
      heldByPeer: isHeldByPeer(stream),
      ...(transport === null ? {} : { transport }),
      ...(sdes === null ? {} : { sdes }),
    },
  };
}
