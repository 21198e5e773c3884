import type { SampleRate } from '../codec/argument-checks.js';
import {
  DEFAULT_OPUS_COMPLEXITY,
  OPUS_CLOCK_RATE,
  OpusDecoder,
  OpusEncoder,
} from '../codec/opus.js';
import type { AudioFormat, CodecSettings, PayloadCodec } from './audio-format.js';

/**
 * The loss a receiver's report must show before the encoder spends on in-band FEC, in
 * percent of packets (smoothed): below it, the LBRR copy of each frame would cost about a
 * fifth of the encoder's CPU at complexity 5 (bench/media/opus.ts) for nothing.
 */
const FEC_FROM_LOSS_PERCENT = 1;
/** The most loss FEC is planned for: beyond it, the bits go to the copy, not the audio. */
const MAX_PLANNED_LOSS_PERCENT = 25;
/** How much of the smoothed loss a report that shows less loss keeps (it decays, not drops). */
const LOSS_DECAY = 0.75;

/** The widest band (Hz) coded at NARROWBAND_COMPLEXITY: Opus's narrowband. */
const NARROWBAND_HZ = 4000;
/**
 * The complexity narrowband audio (a bot's 8 kHz stream, a phone's G.711) is coded at unless
 * the operator set one. Measured on speech (bench/media/opus-quality.ts, bench/README.md): 1
 * codes narrowband as well as 5 (Bark spectral distortion 2.0 against 1.9 dB, a tone's SNR
 * 31.9 against 32.2 dB) for half the encoder's CPU; wideband at 1 to 3 loses 0.5 dB of it
 * against 4 and up (libopus's noise shaping), so wider bands keep DEFAULT_OPUS_COMPLEXITY.
 */
const NARROWBAND_COMPLEXITY = 1;

/**
 * Frames of digital silence the encoder codes before its last packet is sent again in its
 * place. libopus's packets for silence settle within a few frames into 6 or 7 bytes that decode
 * to nothing, at the full cost of a frame of speech (bench/README.md); an idle leg, a bot not
 * speaking, sends digital silence most of a call.
 */
const SILENCE_CODED_FRAMES = 10;

/** Whether every sample of a frame is 0: nothing plays (what "silence" means here). */
function digitalSilence(pcm: Int16Array): boolean {
  for (let i = 0; i < pcm.length; i++) if (pcm[i] !== 0) return false;
  return true;
}

/**
 * Encodes a leg's frames, coding a run of digital silence only until it has settled: after
 * SILENCE_CODED_FRAMES the encoder's last packet goes again, a valid packet the peer decodes
 * to silence, and the encoder picks up from the state it left when audio comes back (it saw
 * silence; the decoder heard silence).
 */
class SilenceSkippingEncoder {
  private silentFrames = 0;
  private lastSilence: Buffer | null = null;

  constructor(private readonly encoder: OpusEncoder) {}

  encode(pcm: Int16Array): Buffer {
    if (!digitalSilence(pcm)) {
      this.silentFrames = 0;
      return this.encoder.encode(pcm);
    }
    this.silentFrames++;
    if (this.silentFrames > SILENCE_CODED_FRAMES && this.lastSilence) return this.lastSilence;
    this.lastSilence = this.encoder.encode(pcm);
    return this.lastSilence;
  }
}

/** The complexity a band is coded at: the operator's for every band, else by the band. */
function complexityFor(band: number, chosen: number | undefined): number {
  if (chosen !== undefined) return chosen;
  return band <= NARROWBAND_HZ ? NARROWBAND_COMPLEXITY : DEFAULT_OPUS_COMPLEXITY;
}

/**
 * How the sending side of an Opus leg adapts as the call goes (RFC 7587 3.1.2 leaves it to
 * the sender): the band coded follows the audio played, and in-band FEC follows the loss the
 * receiver reports in RTCP (RFC 3550 6.4.1), as WebRTC endpoints do.
 */
class OpusSendTuning {
  private band = 0;
  private coding: number;
  private loss = 0;
  private planned = 0;

  constructor(
    private readonly encoder: OpusEncoder,
    private readonly fullBand: number,
    private readonly fec: boolean,
    /** The operator's complexity (VOXGATE_OPUS_COMPLEXITY), if any. */
    private readonly complexity: number | undefined,
  ) {
    this.coding = complexityFor(fullBand, complexity);
  }

  /**
   * The highest frequency the next frame holds (half the rate of the audio's source), or null
   * when it is not known: then the call's whole band is coded. At the start of a talkspurt
   * (after silence) the encoder moves to a new band at once, else over a few seconds.
   */
  audioBand(hz: number | null, talkspurtStart: boolean): void {
    const band = Math.min(hz ?? this.fullBand, this.fullBand);
    if (band === this.band) return;
    const complexity = complexityFor(band, this.complexity);
    if (complexity !== this.coding) {
      this.coding = complexity;
      this.encoder.setComplexity(complexity);
    }
    this.band = band;
    this.encoder.setAudioBand(band, talkspurtStart);
  }

  /** A reception report's fraction lost (0-255) about what this side sends. */
  lossReported(fractionLost: number): void {
    if (!this.fec) return;
    const percent = (fractionLost * 100) / 256;
    // Loss that rises is planned for at once; loss that falls is let go of slowly.
    this.loss =
      percent >= this.loss ? percent : this.loss * LOSS_DECAY + percent * (1 - LOSS_DECAY);
    const planned =
      this.loss < FEC_FROM_LOSS_PERCENT
        ? 0
        : Math.min(Math.round(this.loss), MAX_PLANNED_LOSS_PERCENT);
    if (planned === this.planned) return;
    this.planned = planned;
    this.encoder.setExpectedLoss(planned);
  }
}

/**
 * Opus at the call's rate (libopus takes it directly), with the 48 kHz RTP clock. The encoder
 * starts planning for no loss (so no FEC data is made) and for the call's whole band, at that
 * band's complexity.
 */
export function opusCodec(
  format: AudioFormat,
  rate: SampleRate,
  settings: CodecSettings,
): PayloadCodec {
  const sending = format.opus ?? {};
  const encoder = new OpusEncoder(rate, {
    bitrate: sending.bitrate,
    fec: sending.fec,
    expectedLossPercent: 0,
    dtx: sending.dtx,
    complexity: complexityFor(rate / 2, settings.opusComplexity),
  });
  const decoder = new OpusDecoder(rate);
  const sender = new SilenceSkippingEncoder(encoder);
  const tuning = new OpusSendTuning(
    encoder,
    rate / 2,
    sending.fec ?? true,
    settings.opusComplexity,
  );
  return {
    format,
    clockRate: OPUS_CLOCK_RATE,
    sequential: true,
    decode: (payload) => decoder.decode(payload),
    encode: (pcm) => sender.encode(pcm),
    recover: (samples, next) =>
      next === null ? decoder.conceal(samples) : decoder.decodeFec(next, samples),
    audioBand: (hz, talkspurtStart) => tuning.audioBand(hz, talkspurtStart),
    lossReported: (fraction) => tuning.lossReported(fraction),
  };
}
