import { checkRate, type SampleRate } from '../codec/argument-checks.js';
import { aLawDecode, aLawEncode, muLawDecode, muLawEncode } from '../codec/g711.js';
import { l16FromNetwork, l16ToNetwork } from '../codec/pcm-frame.js';

/** The audio encodings a call's RTP may carry (RFC 3551 PCMU and PCMA; L16 optional). */
export type AudioEncoding = 'PCMU' | 'PCMA' | 'L16';

/** One negotiated audio format: what SDP's rtpmap said. */
export interface AudioFormat {
  encoding: AudioEncoding;
  payloadType: number;
  /** The RTP clock rate, which is also the sample rate for these encodings. */
  rate: SampleRate;
}

/** Turns RTP payloads of one format into 16-bit PCM and back. */
export interface PayloadCodec {
  readonly format: AudioFormat;
  decode(payload: Uint8Array): Int16Array;
  encode(pcm: Int16Array): Uint8Array;
}

const CODERS: Record<
  AudioEncoding,
  { decode(payload: Uint8Array): Int16Array; encode(pcm: Int16Array): Uint8Array }
> = {
  PCMU: { decode: muLawDecode, encode: muLawEncode },
  PCMA: { decode: aLawDecode, encode: aLawEncode },
  L16: { decode: l16FromNetwork, encode: l16ToNetwork },
};

export function checkAudioFormat(format: AudioFormat): AudioFormat {
  if (!(format.encoding in CODERS)) {
    throw new Error(`Expected an encoding of PCMU, PCMA or L16 but received ${format.encoding}`);
  }
  if (!Number.isInteger(format.payloadType) || format.payloadType < 0 || format.payloadType > 127) {
    throw new RangeError(
      `Expected a payload type from 0 to 127 but received ${format.payloadType}`,
    );
  }
  checkRate(format.rate, 'rate');
  if (format.encoding !== 'L16' && format.rate !== 8000) {
    throw new RangeError(`Expected ${format.encoding} at 8000 Hz but received ${format.rate}`);
  }
  return format;
}

export function payloadCodec(format: AudioFormat): PayloadCodec {
  const coder = CODERS[checkAudioFormat(format).encoding];
  return { format, decode: coder.decode, encode: coder.encode };
}
