import { addon, type NativeOpusDecoder, type NativeOpusEncoder } from './native-addon.js';
import {
  checkInt16Array,
  checkIntegerInRange,
  checkUint8Array,
  describe,
} from './argument-checks.js';

/**
 * Opus (RFC 6716) through libopus, mono, for calls (RFC 7587 carries it over RTP). The
 * encoder and decoder work on PCM at the call's own rate: libopus takes 8, 12, 16, 24 or
 * 48 kHz directly, so no resampling sits between them and the pipeline. Whatever that rate,
 * the RTP clock of Opus is 48 kHz (RFC 7587 4.1).
 */

export const OPUS_RATES = [8000, 12000, 16000, 24000, 48000] as const;
export type OpusRate = (typeof OPUS_RATES)[number];

/** RFC 7587 4.1: "the RTP timestamp is incremented with a 48000 Hz clock rate". */
export const OPUS_CLOCK_RATE = 48000;

/** Frame lengths libopus encodes, in tenths of a millisecond (2.5 to 60 ms). */
const FRAME_TENTHS_MS = [25, 50, 100, 200, 400, 600] as const;

/**
 * The encoder's complexity unless told otherwise. At 16 kHz, 0 costs about half the CPU of 5
 * per frame (see bench/media/opus.ts); a call leg's complexity follows the band it codes
 * (pipeline/opus-codec.ts).
 */
export const DEFAULT_OPUS_COMPLEXITY = 5;

export interface OpusEncoderOptions {
  /** Target bitrate in bit/s, 6000 to 510000 (RFC 7587 3.1.1's range); 24000 by default. */
  bitrate?: number;
  /** In-band FEC (LBRR): each packet carries a coarse copy of the one before. On by default. */
  fec?: boolean;
  /**
   * Packet loss in percent the encoder plans for, 0-100 (10 by default). libopus adds FEC
   * data only when this is above 0, and spends more of the bitrate on it as it grows.
   */
  expectedLossPercent?: number;
  /** Discontinuous transmission: silence goes as 1-2 byte packets, less often. Off by default. */
  dtx?: boolean;
  /** 0 (cheapest) to 10 (best); DEFAULT_OPUS_COMPLEXITY (5) by default. */
  complexity?: number;
  /**
   * Code with CELT only (libopus's restricted low-delay application), never SILK: about half
   * the CPU of SILK at low complexity and 4 ms less delay, but no in-band FEC. Off by default.
   */
  celtOnly?: boolean;
}

/** A packet libopus refused, or a libopus call that failed; `code` is libopus's (negative). */
export class OpusError extends Error {
  constructor(
    readonly code: number,
    what: string,
  ) {
    super(`${what}: ${addon.opusErrorText(code)} (${code})`);
    this.name = 'OpusError';
  }
}

export function checkOpusRate(value: unknown, name: string): OpusRate {
  if (!OPUS_RATES.includes(value as OpusRate)) {
    throw new RangeError(
      `Expected one of ${OPUS_RATES.join(', ')} (Hz) for ${name} but received ${describe(value)}`,
    );
  }
  return value as OpusRate;
}

function frameLengths(rate: number): number[] {
  return FRAME_TENTHS_MS.map((tenths) => (rate * tenths) / 10000);
}

/** Mono VoIP encoder: one 2.5-60 ms frame of PCM at its rate in, one Opus packet out. */
export class OpusEncoder {
  readonly rate: OpusRate;
  readonly #native: NativeOpusEncoder;
  readonly #frames: number[];

  constructor(rate: OpusRate, options: OpusEncoderOptions = {}) {
    this.rate = checkOpusRate(rate, 'rate');
    this.#frames = frameLengths(rate);
    this.#native = new addon.OpusEncoder(
      rate,
      checkIntegerInRange(options.bitrate ?? 24000, 6000, 510000, 'bitrate'),
      checkBoolean(options.fec ?? true, 'fec'),
      checkIntegerInRange(options.expectedLossPercent ?? 10, 0, 100, 'expectedLossPercent'),
      checkBoolean(options.dtx ?? false, 'dtx'),
      checkIntegerInRange(options.complexity ?? DEFAULT_OPUS_COMPLEXITY, 0, 10, 'complexity'),
      checkBoolean(options.celtOnly ?? false, 'celtOnly'),
    );
  }

  /**
   * Encodes one frame. With DTX on, silence may come out as a packet of 1 or 2 bytes, which
   * a sender may leave unsent (the receiver conceals the gap as comfort noise).
   */
  encode(pcm: Int16Array): Buffer {
    checkInt16Array(pcm, 'pcm');
    if (!this.#frames.includes(pcm.length)) {
      throw new RangeError(
        `Expected a frame of ${this.#frames.join(', ')} samples (2.5 to 60 ms at ${this.rate} Hz) but received ${pcm.length}`,
      );
    }
    return this.#native.encode(pcm);
  }

  setBitrate(bitsPerSecond: number): void {
    this.#native.setBitrate(checkIntegerInRange(bitsPerSecond, 6000, 510000, 'bitsPerSecond'));
  }

  /** 0 (cheapest) to 10 (best), from the next frame on. */
  setComplexity(complexity: number): void {
    this.#native.setComplexity(checkIntegerInRange(complexity, 0, 10, 'complexity'));
  }

  setExpectedLoss(percent: number): void {
    this.#native.setPacketLoss(checkIntegerInRange(percent, 0, 100, 'percent'));
  }

  /**
   * The highest frequency the audio holds, in Hz (its source's rate over two): the encoder
   * codes no wider a band than holds it (narrowband up to 4000), which saves the CPU and bits
   * of coding a band that is empty. At most half the encoder's rate is coded in any case.
   * libopus moves to a new band over a few seconds, smoothly; `now` moves at once by starting
   * the encoder afresh, which a listener does not hear only at a gap in the audio.
   */
  setAudioBand(hz: number, now = false): void {
    this.#native.setMaxBandwidth(checkIntegerInRange(hz, 1, 24000, 'hz'));
    if (now) this.#native.reset();
  }
}

/**
 * Mono decoder at its rate, whatever rate the sender encoded at. Packets go in in sequence:
 * it keeps state between them. A lost packet is made up either from the FEC copy the next
 * packet carries (`decodeFec`), or by concealment (`conceal`) when there is no next packet.
 */
export class OpusDecoder {
  readonly rate: OpusRate;
  readonly #native: NativeOpusDecoder;
  /** The most samples one packet may hold (RFC 6716 3.2.5: 120 ms). */
  readonly #maxSamples: number;

  constructor(rate: OpusRate) {
    this.rate = checkOpusRate(rate, 'rate');
    this.#maxSamples = (rate * 120) / 1000;
    this.#native = new addon.OpusDecoder(rate);
  }

  /**
   * A packet's audio. An empty packet (DTX: nothing sent) is concealed as 20 ms. A packet
   * libopus cannot read throws an OpusError (its code says why); the decoder stays usable.
   */
  decode(packet: Uint8Array): Int16Array {
    checkUint8Array(packet, 'packet');
    if (packet.length === 0) return this.conceal(this.rate / 50);
    return this.#result(this.#native.decode(packet, 0, false), 'opus_decode');
  }

  /**
   * The audio of the packet before `next`, which was lost, from the FEC data `next` carries;
   * `samples` is the lost packet's length. When `next` carries none, libopus conceals instead.
   */
  decodeFec(next: Uint8Array, samples: number): Int16Array {
    checkUint8Array(next, 'next');
    this.#checkLostSamples(samples);
    if (next.length === 0) return this.conceal(samples);
    return this.#result(this.#native.decode(next, samples, true), 'opus_decode (FEC)');
  }

  /** `samples` (a multiple of 2.5 ms) of concealment for a packet that never came. */
  conceal(samples: number): Int16Array {
    this.#checkLostSamples(samples);
    return this.#result(this.#native.decode(null, samples, false), 'opus_decode (PLC)');
  }

  #checkLostSamples(samples: number): void {
    const step = this.rate / 400;
    checkIntegerInRange(samples, step, this.#maxSamples, 'samples');
    if (samples % step !== 0) {
      throw new RangeError(
        `Expected a multiple of ${step} samples (2.5 ms at ${this.rate} Hz) for samples but received ${samples}`,
      );
    }
  }

  #result(out: Int16Array | number, what: string): Int16Array {
    if (typeof out === 'number') throw new OpusError(out, what);
    return out;
  }
}

/** The audio an Opus packet holds, in samples at `rate`; a malformed packet throws OpusError. */
export function opusPacketSamples(packet: Uint8Array, rate: OpusRate): number {
  checkUint8Array(packet, 'packet');
  checkOpusRate(rate, 'rate');
  const samples = addon.opusPacketSamples(packet, rate);
  if (samples < 0) throw new OpusError(samples, 'opus_packet_get_nb_samples');
  return samples;
}

function checkBoolean(value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') {
    throw new TypeError(`Expected a boolean for ${name} but received ${describe(value)}`);
  }
  return value;
}
