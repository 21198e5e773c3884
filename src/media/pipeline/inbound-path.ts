import type { SampleRate } from '../codec/argument-checks.js';
import { NoiseSuppressor } from '../codec/noise-suppressor.js';
import { concatPcm } from '../codec/pcm-frame.js';
import type { DtmfDigit } from '../dtmf/dtmf-digit.js';
import { InbandDtmfDetector } from '../dtmf/inband-dtmf-detector.js';
import {
  JitterBuffer,
  type JitterBufferOptions,
  type JitterBufferStats,
} from '../jitter/jitter-buffer.js';
import { LossConcealment } from '../jitter/loss-concealment.js';
import { payloadCodec, type AudioFormat, type PayloadCodec } from './audio-format.js';

export interface InboundPathOptions {
  rate: SampleRate;
  /** The formats the peer may send; a packet of any other payload type is refused. */
  formats: readonly AudioFormat[];
  /** 60-100 turns noise suppression on at that strength; absent leaves the audio alone. */
  noiseCancellationLevel?: number;
  /** Listen for DTMF tones in the audio (8 kHz calls only). */
  onInbandDigit?: (digit: DtmfDigit) => void;
  jitter?: JitterBufferOptions;
}

export interface InboundPacket {
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  payload: Uint8Array;
}

export type InboundVerdict =
  'queued' | 'duplicate' | 'late' | 'unknown-payload-type' | 'undecodable';

export interface InboundStats extends JitterBufferStats {
  /** Packets of a payload type that was not negotiated. */
  unknownPayloadType: number;
  /** Frames made up by concealment (or, for Opus, by the next packet's FEC data). */
  concealed: number;
  /** Packets the decoder refused (a corrupt Opus packet); each is concealed. */
  undecodable: number;
  /** Lost Opus packets decoded from the FEC data of the packet after them. */
  fecDecoded: number;
}

/** A packet in the jitter buffer: decoded already, or (Opus) waiting for its turn. */
interface HeldAudio {
  codec: PayloadCodec;
  payload: Uint8Array;
  pcm: Int16Array | null;
}

/**
 * The receiving half of a call leg: RTP audio packets in (any order, any packet length),
 * one 20 ms frame of 16-bit PCM at the call's rate out per tick, through the jitter buffer,
 * the decoder, loss concealment (Opus's own, FEC first, for Opus) and, when asked, noise suppression and in-band DTMF
 * detection. Nothing is resampled here; whoever takes the audio at another rate does that.
 */
export class InboundPath {
  readonly frameSamples: number;
  private readonly codecs = new Map<number, PayloadCodec>();
  /** Decoders of their own for the packet tap, which hears packets as they arrive. */
  private readonly arrivalCodecs = new Map<number, PayloadCodec>();
  private readonly jitter: JitterBuffer<HeldAudio>;
  private readonly concealment = new LossConcealment();
  private readonly suppressor: NoiseSuppressor | null;
  private readonly detector: InbandDtmfDetector | null;
  private detecting = true;
  /** Decoded audio not yet handed out, at most one packet's worth beyond a frame. */
  private pending: Int16Array = new Int16Array(0);
  private lastPacketSamples: number;
  private lastCodec: PayloadCodec | null = null;
  private unknownPayloadType = 0;
  private concealed = 0;
  private undecodable = 0;
  private fecDecoded = 0;

  constructor(private readonly options: InboundPathOptions) {
    this.frameSamples = options.rate / 50;
    this.lastPacketSamples = this.frameSamples;
    this.setFormats(options.formats);
    this.jitter = new JitterBuffer<HeldAudio>({
      frameSamples: this.frameSamples,
      ...options.jitter,
    });
    this.suppressor =
      options.noiseCancellationLevel === undefined
        ? null
        : new NoiseSuppressor(options.rate, options.noiseCancellationLevel);
    this.detector =
      options.onInbandDigit && options.rate === 8000 ? new InbandDtmfDetector() : null;
  }

  /**
   * Whether in-band digits are looked for (when onInbandDigit was given). A peer that
   * negotiated telephone-event sends its digits as RFC 4733 events, so the media session turns
   * this off for it, as it sends its own digits that way.
   */
  setInbandDetection(on: boolean): void {
    this.detecting = on;
  }

  /**
   * The formats accepted from now on (a re-INVITE may change them; the rate stays: a format
   * at another rate is decoded to the call's, by Opus itself or through a resampler).
   */
  setFormats(formats: readonly AudioFormat[]): void {
    const codecs = formats.map((format) => payloadCodec(format, this.options.rate));
    this.codecs.clear();
    this.arrivalCodecs.clear();
    for (const codec of codecs) this.codecs.set(codec.format.payloadType, codec);
  }

  get stats(): InboundStats {
    return {
      ...this.jitter.stats,
      unknownPayloadType: this.unknownPayloadType,
      concealed: this.concealed,
      undecodable: this.undecodable,
      fecDecoded: this.fecDecoded,
    };
  }

  /** Told of each packet's audio as it is decoded, before the jitter buffer (streams). */
  onDecoded: ((pcm: Int16Array, packet: InboundPacket) => void) | null = null;

  push(packet: InboundPacket): InboundVerdict {
    const codec = this.codecs.get(packet.payloadType);
    if (!codec) {
      this.unknownPayloadType++;
      return 'unknown-payload-type';
    }
    // Stateless codecs decode now; Opus waits for its turn, in sequence, so that a lost
    // packet can be rebuilt from the next one's FEC data.
    const pcm = codec.sequential ? null : this.decode(codec, packet.payload);
    if (!codec.sequential && pcm === null) return 'undecodable';
    if (this.onDecoded) {
      const heard = pcm ?? this.decode(this.arrivalCodec(codec), packet.payload, false);
      if (heard !== null) this.onDecoded(heard, packet);
    }
    return this.jitter.push({
      sequenceNumber: packet.sequenceNumber,
      timestamp: packet.timestamp,
      payload: { codec, payload: packet.payload, pcm },
    });
  }

  /** The next 20 ms heard, or null while nothing arrives (before the first packet, on hold). */
  frame(): Int16Array | null {
    while (this.pending.length < this.frameSamples) {
      const next = this.nextPacketAudio();
      if (next === null) break;
      this.pending = this.pending.length === 0 ? next : concatPcm(this.pending, next);
    }
    if (this.pending.length === 0) return null;
    let frame: Int16Array;
    if (this.pending.length >= this.frameSamples) {
      frame = this.pending.subarray(0, this.frameSamples);
      this.pending = this.pending.subarray(this.frameSamples);
    } else {
      // The stream stalled mid-frame: the rest of the frame is silence.
      frame = new Int16Array(this.frameSamples);
      frame.set(this.pending);
      this.pending = new Int16Array(0);
    }
    if (this.suppressor) frame = this.suppressor.processFrames(frame);
    if (this.detector && this.detecting) {
      for (const found of this.detector.process(frame)) this.options.onInbandDigit?.(found.digit);
    }
    return frame;
  }

  private nextPacketAudio(): Int16Array | null {
    const out = this.jitter.pull();
    if (out.kind === 'empty') return null;
    if (out.kind === 'lost') return this.conceal();
    const held = out.payload;
    const pcm = held.pcm ?? this.decode(held.codec, held.payload);
    if (pcm === null) return this.conceal();
    if (pcm.length === 0) return null;
    this.lastPacketSamples = pcm.length;
    this.lastCodec = held.codec;
    this.concealment.played(pcm);
    return pcm;
  }

  /** The audio of a packet that is missing, or that its decoder refused. */
  private conceal(): Int16Array {
    this.concealed++;
    const codec = this.lastCodec;
    if (codec?.recover) {
      const next = this.jitter.peekNext();
      const carrier = next?.codec === codec ? next.payload : null;
      try {
        const pcm = codec.recover(this.lastPacketSamples, carrier);
        if (carrier !== null) this.fecDecoded++;
        return pcm;
      } catch {
        // A corrupt next packet: fall back to repeating the last frame.
      }
    }
    return this.concealment.conceal(this.lastPacketSamples);
  }

  /** A payload's audio, or null (counted once, by the path's own decoder) when refused. */
  private decode(codec: PayloadCodec, payload: Uint8Array, count = true): Int16Array | null {
    try {
      return codec.decode(payload);
    } catch {
      if (count) this.undecodable++;
      return null;
    }
  }

  private arrivalCodec(codec: PayloadCodec): PayloadCodec {
    let own = this.arrivalCodecs.get(codec.format.payloadType);
    if (!own) {
      own = payloadCodec(codec.format, this.options.rate);
      this.arrivalCodecs.set(codec.format.payloadType, own);
    }
    return own;
  }
}
