import type { PayloadFormat } from './session-description.js';

/** The audio codecs the media plane can carry. */
export type AudioCodec = 'PCMU' | 'PCMA' | 'L16/8000' | 'L16/16000' | 'opus';

interface CodecFormat {
  readonly encoding: string;
  readonly clockRate: number;
  /** What voxgate's rtpmap says; 1 unless the codec's RTP mapping says otherwise. */
  readonly channels: number;
  /** The payload type voxgate puts in its own offers. */
  readonly offerPayloadType: number;
  /** voxgate's fmtp for the codec, in offers and answers alike. */
  readonly fmtp?: string;
}

/**
 * RFC 7587 7: voxgate receives 20 ms packets and takes 10 ms ones (minptime), decodes FEC
 * (useinbandfec), and plays and captures at most 16 kHz, the rate of an Opus leg, so a peer
 * need not spend bits above 8 kHz of audio.
 */
export const OPUS_FMTP =
  'minptime=10;useinbandfec=1;maxplaybackrate=16000;sprop-maxcapturerate=16000';

const CODEC_FORMATS: Readonly<Record<AudioCodec, CodecFormat>> = {
  PCMU: { encoding: 'PCMU', clockRate: 8000, channels: 1, offerPayloadType: 0 },
  PCMA: { encoding: 'PCMA', clockRate: 8000, channels: 1, offerPayloadType: 8 },
  // RFC 3551 4.5.11: L16 at 8 or 16 kHz has no static payload type; these are dynamic.
  'L16/8000': { encoding: 'L16', clockRate: 8000, channels: 1, offerPayloadType: 97 },
  'L16/16000': { encoding: 'L16', clockRate: 16000, channels: 1, offerPayloadType: 96 },
  // RFC 7587 7: "The RTP clock rate in "a=rtpmap" MUST be 48000, and the number of channels
  // MUST be 2." Mono is still what voxgate sends; 111 is the dynamic type browsers use.
  opus: {
    encoding: 'opus',
    clockRate: 48000,
    channels: 2,
    offerPayloadType: 111,
    fmtp: OPUS_FMTP,
  },
};

export const AUDIO_CODECS: readonly AudioCodec[] = [
  'PCMU',
  'PCMA',
  'L16/8000',
  'L16/16000',
  'opus',
];
/** What voxgate offers: carriers take G.711. */
export const DEFAULT_AUDIO_CODECS: readonly AudioCodec[] = ['PCMU', 'PCMA'];
/** What voxgate accepts in an offer: Opus too, when the peer prefers it. */
export const DEFAULT_ANSWER_CODECS: readonly AudioCodec[] = ['PCMU', 'PCMA', 'opus'];
/** What a WebRTC leg offers and accepts by default: opus first, as browsers expect. */
export const DEFAULT_WEBRTC_CODECS: readonly AudioCodec[] = ['opus', 'PCMU', 'PCMA'];

export const TELEPHONE_EVENT = 'telephone-event';
/** Payload types of telephone-event in voxgate's offers, by clock rate. */
export const TELEPHONE_EVENT_PAYLOAD_TYPES: ReadonlyMap<number, number> = new Map([
  [8000, 101],
  [16000, 102],
  [48000, 110],
]);
/** RFC 4733 3.2: the DTMF events 0-9, *, #, A-D and flash. */
export const SUPPORTED_EVENTS = { first: 0, last: 16 } as const;

export function codecPayload(codec: AudioCodec): PayloadFormat {
  const format = CODEC_FORMATS[codec];
  return {
    payloadType: format.offerPayloadType,
    encoding: format.encoding,
    clockRate: format.clockRate,
    channels: format.channels,
    fmtp: format.fmtp ?? null,
  };
}

/** The payload format voxgate writes in an answer that takes `offered` as `codec`. */
export function answerPayload(offered: PayloadFormat, codec: AudioCodec): PayloadFormat {
  const format = CODEC_FORMATS[codec];
  if (format.fmtp === undefined) return offered;
  return { ...offered, channels: format.channels ?? 1, fmtp: format.fmtp };
}

/** The codec a payload format carries, or null when voxgate cannot serve it. */
export function codecOf(payload: PayloadFormat): AudioCodec | null {
  const encoding = payload.encoding.toUpperCase();
  for (const codec of AUDIO_CODECS) {
    const format = CODEC_FORMATS[codec];
    if (format.encoding.toUpperCase() !== encoding || format.clockRate !== payload.clockRate) {
      continue;
    }
    // An Opus decoder takes mono and stereo streams alike (some peers write opus/48000/1).
    if (payload.channels === 1 || (codec === 'opus' && payload.channels === 2)) return codec;
  }
  return null;
}

export function isTelephoneEvent(payload: PayloadFormat): boolean {
  return payload.encoding.toLowerCase() === TELEPHONE_EVENT;
}

/**
 * The events of an RFC 4733 fmtp list ("0-15,66") that voxgate also supports, written back in
 * the same form; null when none are left. A missing list means 0-15 (RFC 4733 2.4.1).
 */
export function commonEvents(fmtp: string | null): string | null {
  const wanted = new Set<number>();
  for (const part of (fmtp ?? '0-15').split(',')) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (match === null) continue;
    const low = Number(match[1]);
    const high = Math.min(Number(match[2] ?? match[1]), SUPPORTED_EVENTS.last);
    for (let event = Math.max(low, SUPPORTED_EVENTS.first); event <= high; event++) {
      wanted.add(event);
    }
  }
  const events = [...wanted].sort((a, b) => a - b);
  const ranges: string[] = [];
  let start = 0;
  for (let i = 1; i <= events.length; i++) {
    if (i === events.length || events[i] !== (events[i - 1] ?? 0) + 1) {
      const first = events[start];
      const last = events[i - 1];
      ranges.push(first === last ? `${first}` : `${first}-${last}`);
      start = i;
    }
  }
  return ranges.length === 0 ? null : ranges.join(',');
}
