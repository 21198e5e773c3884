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
  /** Its RTP source; a new one (a transfer, a re-anchored stream) numbers its packets afresh. */
  ssrc?: number;
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
const NO_PAYLOAD = new Uint8Array(0);

interface HeldAudio {
  codec: PayloadCodec;
  sequenceNumber: number;
  payload: Uint8Array;
  pcm: Int16Array | null;
  /** Its decoder refused it (a corrupt Opus packet): its turn conceals it. */
  refused: boolean;
  /** A packet of the stream that carries no audio (an RFC 4733 event): its turn is silence. */
  silent?: true;
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
  /**
   * The last packet a sequential codec's decoder (Opus, whose state runs from packet to packet)
   * has taken in its turn, concealed ones included. The packet in sequence after it may be
   * decoded as it arrives, once for both the packet tap and the frames, since its turn would
   * decode it from the same state. decodedCodec is null before the first.
   */
  private decodedCodec: PayloadCodec | null = null;
  private decodedThrough = 0;
  /** The RTP source of the packets taken so far (undefined before the first). */
  private source: number | undefined;
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
    if (packet.ssrc !== undefined && packet.ssrc !== this.source) this.newSource(packet.ssrc);
    if (codec.sequential) return this.pushInSequence(codec, packet);
    // Stateless codecs decode now, for the tap and the frames alike.
    const pcm = this.decode(codec, packet.payload);
    if (pcm === null) return 'undecodable';
    this.onDecoded?.(pcm, packet);
    return this.jitter.push({
      sequenceNumber: packet.sequenceNumber,
      timestamp: packet.timestamp,
      payload: this.held(codec, packet, pcm),
    });
  }

  /**
   * A packet of the leg's RTP stream that carries no audio: an RFC 4733 event, numbered in the
   * audio's sequence, which a sender sends in place of its audio while a key is pressed (as
   * browsers do). Its turn plays silence, where the gap in the numbers would have been
   * concealed as a loss (the audio before it smeared on, about 100 to 200 ms a key press).
   */
  noAudio(packet: Pick<InboundPacket, 'sequenceNumber' | 'timestamp' | 'ssrc'>): void {
    // Events of a source other than the audio's (rare: they share one, RFC 4733 2.1) or before
    // any audio take no place in the audio's numbering.
    if (packet.ssrc !== this.source) return;
    const codec = this.lastCodec ?? this.codecs.values().next().value;
    if (codec === undefined) return;
    this.jitter.push({
      sequenceNumber: packet.sequenceNumber,
      timestamp: packet.timestamp,
      payload: {
        codec,
        sequenceNumber: packet.sequenceNumber,
        payload: NO_PAYLOAD,
        pcm: null,
        refused: false,
        silent: true,
      },
    });
  }

  /**
   * Opus waits for its turn, in sequence, so that a lost packet can be rebuilt from the next
   * one's FEC data. A packet tap hears it as it arrives: decoded then by the path's own decoder
   * when it is the next in sequence (what its turn would do), else by a decoder of the tap's.
   */
  private pushInSequence(codec: PayloadCodec, packet: InboundPacket): InboundVerdict {
    const held = this.held(codec, packet);
    const verdict = this.jitter.push({
      sequenceNumber: packet.sequenceNumber,
      timestamp: packet.timestamp,
      payload: held,
    });
    if (!this.onDecoded) return verdict;
    if (verdict === 'queued' && this.nextInSequence(held)) this.decodeInTurn(held);
    const heard = held.refused
      ? null
      : (held.pcm ?? this.decode(this.arrivalCodec(codec), packet.payload, false));
    if (heard !== null) this.onDecoded(heard, packet);
    return verdict;
  }

  /**
   * Another RTP source took over the leg: its sequence numbers and timestamps start anywhere
   * (RFC 3550 5.1, 8.2), so what the jitter buffer and the decoder's turn know of the old one
   * says nothing of it. Within 3000 numbers of the old ones, its packets would have been taken
   * as late, or as a gap to conceal and a delay to keep. What the old one left decoded plays.
   */
  private newSource(ssrc: number): void {
    if (this.source !== undefined) {
      this.jitter.restart();
      this.decodedCodec = null;
      this.decodedThrough = 0;
    }
    this.source = ssrc;
  }

  private held(
    codec: PayloadCodec,
    packet: InboundPacket,
    pcm: Int16Array | null = null,
  ): HeldAudio {
    return {
      codec,
      sequenceNumber: packet.sequenceNumber,
      payload: packet.payload,
      pcm,
      refused: false,
    };
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
    if (out.kind === 'lost') return this.concealInTurn(out.seq);
    const held = out.payload;
    if (held.silent) return this.silenceInTurn(held);
    if (held.pcm === null && !held.refused) {
      this.decodeInTurn(held);
      this.decodeAhead();
    }
    const pcm = held.pcm;
    if (pcm === null) {
      this.undecodable++;
      return this.concealInTurn(held.sequenceNumber);
    }
    if (pcm.length === 0) return null;
    this.lastPacketSamples = pcm.length;
    this.lastCodec = held.codec;
    this.concealment.played(pcm);
    return pcm;
  }

  /** A packet without audio's turn: silence, and the decoder's turn moves past its number. */
  private silenceInTurn(held: HeldAudio): Int16Array {
    const pcm = new Int16Array(this.lastPacketSamples);
    const follows = ((held.sequenceNumber - this.decodedThrough) & 0xffff) === 1;
    if (this.decodedCodec !== null && follows) {
      this.decodedThrough = held.sequenceNumber;
      this.decodeAhead();
    }
    this.concealment.played(pcm);
    return pcm;
  }

  /** Conceals the packet whose turn it is, `sequenceNumber`, and decodes ahead after it. */
  private concealInTurn(sequenceNumber: number): Int16Array {
    const pcm = this.conceal();
    if (this.lastCodec?.sequential) {
      this.decodedCodec = this.lastCodec;
      this.decodedThrough = sequenceNumber;
      this.decodeAhead();
    }
    return pcm;
  }

  /** Decodes a held Opus packet with the path's decoder: at its turn, or as the next in sequence. */
  private decodeInTurn(held: HeldAudio): void {
    const pcm = this.decode(held.codec, held.payload, false);
    // A refused packet leaves the decoder where it was: its turn conceals it, from the next
    // packet's FEC data when that is held, which must not be decoded before then.
    if (pcm === null) {
      held.refused = true;
      return;
    }
    held.pcm = pcm;
    this.decodedCodec = held.codec;
    this.decodedThrough = held.sequenceNumber;
  }

  /**
   * While a packet tap listens, decodes the held packets that follow the last one decoded, in
   * sequence up to the first gap: after a loss or a reordering, the packets arriving next are
   * then again the next in sequence, decoded once for the tap and the frames.
   */
  private decodeAhead(): void {
    if (!this.onDecoded) return;
    for (let ahead = 0; ; ahead++) {
      const held = this.jitter.peekNext(ahead);
      if (!held || held.silent || held.pcm !== null || held.refused) return;
      if (!this.nextInSequence(held)) return;
      this.decodeInTurn(held);
    }
  }

  /** Whether a packet is the one after the last the path's decoder took (not before the first). */
  private nextInSequence(held: HeldAudio): boolean {
    return (
      this.decodedCodec === held.codec &&
      ((held.sequenceNumber - this.decodedThrough) & 0xffff) === 1
    );
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
