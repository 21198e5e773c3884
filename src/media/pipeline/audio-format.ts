import { checkRate, type SampleRate } from '../codec/argument-checks.js';
import { aLawDecode, aLawEncode, muLawDecode, muLawEncode } from '../codec/g711.js';
import { OPUS_CLOCK_RATE, opusPacketSamples } from '../codec/opus.js';
import { l16FromNetwork, l16ToNetwork } from '../codec/pcm-frame.js';
import { Resampler } from '../codec/resampler.js';
import { opusCodec } from './opus-codec.js';

/** The audio encodings a call's RTP may carry (RFC 3551 PCMU and PCMA, L16; RFC 7587 Opus). */
export type AudioEncoding = 'PCMU' | 'PCMA' | 'L16' | 'opus';

/** How this side encodes Opus, from what the peer's fmtp asked (RFC 7587 7.1). */
export interface OpusSending {
  /** bit/s; 24000 by default, less when the peer's maxaveragebitrate says so. */
  bitrate?: number;
  /** In-band FEC in what is sent (the peer's useinbandfec); on by default. */
  fec?: boolean;
  /** DTX in what is sent (the peer's usedtx); off by default. */
  dtx?: boolean;
}

/** How this side codes, whatever the peer asked: the gateway's own settings. */
export interface CodecSettings {
  /**
   * The Opus encoder's complexity, 0-10, whatever the band (VOXGATE_OPUS_COMPLEXITY); when
   * absent it follows the band coded (pipeline/opus-codec.ts).
   */
  opusComplexity?: number;
}

/** One negotiated audio format: what SDP's rtpmap said. */
export interface AudioFormat {
  encoding: AudioEncoding;
  payloadType: number;
  /**
   * The sample rate of the PCM the format decodes to and encodes from. For PCMU, PCMA and L16
   * it is the RTP clock rate too; Opus codes at any of 8, 16, 24 or 48 kHz with a 48 kHz clock.
   */
  rate: SampleRate;
  opus?: OpusSending;
}

/** Turns RTP payloads of one format into 16-bit PCM at the call's rate and back. */
export interface PayloadCodec {
  readonly format: AudioFormat;
  /** RTP timestamp units per second. */
  readonly clockRate: number;
  /**
   * True for a codec with state between packets (Opus): its packets must be decoded in
   * sequence, so they are decoded as they leave the jitter buffer, not as they arrive.
   */
  readonly sequential: boolean;
  decode(payload: Uint8Array): Int16Array;
  encode(pcm: Int16Array): Uint8Array;
  /**
   * Only for codecs with loss recovery of their own (Opus): `samples` of audio for a lost
   * packet, from the FEC data in `next` (the packet after it) when it came, else concealed.
   */
  recover?(samples: number, next: Uint8Array | null): Int16Array;
  /**
   * Only for codecs that code a band of their choosing (Opus): the highest frequency the
   * frame about to be encoded holds, in Hz, or null when unknown (the call's whole band);
   * `talkspurtStart` when it starts a talkspurt, after silence.
   */
  audioBand?(hz: number | null, talkspurtStart: boolean): void;
  /** Only for codecs that adapt to loss (Opus): an RTCP report's fraction lost (0-255). */
  lossReported?(fractionLost: number): void;
}

const CODERS: Record<
  Exclude<AudioEncoding, 'opus'>,
  { decode(payload: Uint8Array): Int16Array; encode(pcm: Int16Array): Uint8Array }
> = {
  PCMU: { decode: muLawDecode, encode: muLawEncode },
  PCMA: { decode: aLawDecode, encode: aLawEncode },
  L16: { decode: l16FromNetwork, encode: l16ToNetwork },
};

export function checkAudioFormat(format: AudioFormat): AudioFormat {
  if (!(format.encoding in CODERS) && format.encoding !== 'opus') {
    throw new Error(
      `Expected an encoding of PCMU, PCMA, L16 or opus but received ${format.encoding}`,
    );
  }
  if (!Number.isInteger(format.payloadType) || format.payloadType < 0 || format.payloadType > 127) {
    throw new RangeError(
      `Expected a payload type from 0 to 127 but received ${format.payloadType}`,
    );
  }
  checkRate(format.rate, 'rate');
  if ((format.encoding === 'PCMU' || format.encoding === 'PCMA') && format.rate !== 8000) {
    throw new RangeError(`Expected ${format.encoding} at 8000 Hz but received ${format.rate}`);
  }
  return format;
}

/** The RTP clock rate of a format (RFC 7587 4.1: 48 kHz for Opus whatever it codes at). */
export function clockRateOf(format: AudioFormat): number {
  return format.encoding === 'opus' ? OPUS_CLOCK_RATE : format.rate;
}

/**
 * A codec for one format, giving and taking PCM at `rate` (the call's; the format's own by
 * default). Opus codes at the call's rate directly; PCMU, PCMA and L16 at another rate than
 * the call's (a re-INVITE that changed codec) are resampled both ways. Opus codecs hold
 * state: make one per leg and direction of use.
 */
export function payloadCodec(
  format: AudioFormat,
  rate: SampleRate = format.rate,
  settings: CodecSettings = {},
): PayloadCodec {
  checkAudioFormat(format);
  checkRate(rate, 'rate');
  if (format.encoding === 'opus') return opusCodec(format, rate, settings);
  const coder = CODERS[format.encoding];
  const plain = { format, clockRate: format.rate, sequential: false };
  if (rate === format.rate) return { ...plain, decode: coder.decode, encode: coder.encode };
  const toCall = new Resampler(format.rate, rate);
  const toFormat = new Resampler(rate, format.rate);
  return {
    ...plain,
    decode: (payload) => toCall.process(coder.decode(payload)),
    encode: (pcm) => coder.encode(toFormat.process(pcm)),
  };
}

/**
 * RTP timestamp units a payload of a format covers (what a relay advances the timestamp by);
 * an Opus packet that does not parse counts as 20 ms.
 */
export function rtpUnits(format: AudioFormat, payload: Uint8Array): number {
  if (format.encoding === 'opus') {
    try {
      return opusPacketSamples(payload, OPUS_CLOCK_RATE);
    } catch {
      return OPUS_CLOCK_RATE / 50;
    }
  }
  return format.encoding === 'L16' ? payload.length / 2 : payload.length;
}
