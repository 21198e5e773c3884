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

/** The widest band (Hz) of narrowband coding: Opus's narrowband, a bot's 8 kHz audio, G.711. */
const NARROWBAND_HZ = 4000;
/**
 * The complexity narrowband audio is coded at by the VoIP encoder (SILK, while it makes FEC
 * data) unless the operator set one. Measured on speech (bench/media/opus-quality.ts,
 * bench/README.md): 1 codes narrowband as well as 5 (Bark spectral distortion 2.0 against 1.9
 * dB, a tone's SNR 31.9 against 32.2 dB) for half the encoder's CPU; wideband at 1 to 3 loses
 * 0.5 dB of it against 4 and up (libopus's noise shaping), so wider bands keep
 * DEFAULT_OPUS_COMPLEXITY.
 */
const NARROWBAND_COMPLEXITY = 1;
/**
 * The complexity of the CELT-only encoder that codes narrowband audio while no FEC is made,
 * unless the operator set one. At 24 kbit/s CELT codes a 4 kHz band closer to its input than
 * SILK does at any complexity (Bark spectral distortion 1.0 against 1.9-2.1 dB, a tone's SNR
 * 31.5 against 28.7-32.2 dB) for a third of SILK's CPU at complexity 1, and with 4 ms less
 * delay (bench/README.md); 0 costs two thirds of 1 and measures no worse.
 */
const NARROWBAND_CELT_COMPLEXITY = 0;

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

  constructor(private readonly tuning: OpusSendTuning) {}

  encode(pcm: Int16Array): Buffer {
    if (!digitalSilence(pcm)) {
      this.silentFrames = 0;
      return this.tuning.encoder.encode(pcm);
    }
    this.silentFrames++;
    if (this.silentFrames > SILENCE_CODED_FRAMES && this.lastSilence) return this.lastSilence;
    this.lastSilence = this.tuning.encoder.encode(pcm);
    return this.lastSilence;
  }
}

/** The complexity the VoIP encoder codes a band at: the operator's for every band, else by the band. */
function complexityFor(band: number, chosen: number | undefined): number {
  if (chosen !== undefined) return chosen;
  return band <= NARROWBAND_HZ ? NARROWBAND_COMPLEXITY : DEFAULT_OPUS_COMPLEXITY;
}

interface OpusSendingOptions {
  rate: SampleRate;
  bitrate: number | undefined;
  /** Whether the peer takes in-band FEC (its useinbandfec; on unless it says 0). */
  fec: boolean;
  /** Whether the peer asked for DTX (its usedtx). */
  dtx: boolean;
  /** The operator's complexity (VOXGATE_OPUS_COMPLEXITY), if any. */
  complexity: number | undefined;
}

/**
 * How the sending side of an Opus leg adapts as the call goes (RFC 7587 3.1.2 leaves it to
 * the sender): the band coded follows the audio played, in-band FEC follows the loss the
 * receiver reports in RTCP (RFC 3550 6.4.1), as WebRTC endpoints do, and so does the way it is
 * coded. Narrowband audio (a bot's 8 kHz, G.711) goes CELT only, cheaper and closer to its
 * input at this bitrate, while no FEC is made and the peer did not ask for DTX, both of which
 * only SILK has; everything else goes through libopus's VoIP encoder. The peer's decoder
 * follows a change of mode from one packet to the next (RFC 6716 4.5).
 */
class OpusSendTuning {
  /** The encoder coding the leg's frames now. */
  encoder: OpusEncoder;
  private celt: OpusEncoder | null = null;
  private band = 0;
  private voiceComplexity: number;
  private loss = 0;
  private planned = 0;

  constructor(
    /** libopus's VoIP encoder, made for the call's whole band. */
    private readonly voice: OpusEncoder,
    private readonly options: OpusSendingOptions,
  ) {
    this.encoder = voice;
    this.voiceComplexity = complexityFor(options.rate / 2, options.complexity);
  }

  /**
   * The highest frequency the next frame holds (half the rate of the audio's source), or null
   * when it is not known: then the call's whole band is coded. At the start of a talkspurt
   * (after silence) the encoder moves to a new band at once, else over a few seconds.
   */
  audioBand(hz: number | null, talkspurtStart: boolean): void {
    const band = Math.min(hz ?? this.options.rate / 2, this.options.rate / 2);
    if (band === this.band) return;
    this.band = band;
    this.choose(talkspurtStart);
  }

  /** A reception report's fraction lost (0-255) about what this side sends. */
  lossReported(fractionLost: number): void {
    if (!this.options.fec) return;
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
    this.voice.setExpectedLoss(planned);
    this.choose(false);
  }

  /**
   * Codes the band as it now is with the encoder that suits it; an encoder taken up afresh
   * starts from nothing, its state being of audio long gone.
   */
  private choose(talkspurtStart: boolean): void {
    const celtOnly = this.band <= NARROWBAND_HZ && this.planned === 0 && !this.options.dtx;
    const next = celtOnly ? this.celtEncoder() : this.voice;
    if (next === this.voice) {
      const complexity = complexityFor(this.band, this.options.complexity);
      if (complexity !== this.voiceComplexity) {
        this.voiceComplexity = complexity;
        this.voice.setComplexity(complexity);
      }
    }
    next.setAudioBand(this.band, talkspurtStart || next !== this.encoder);
    this.encoder = next;
  }

  private celtEncoder(): OpusEncoder {
    this.celt ??= new OpusEncoder(this.options.rate, {
      bitrate: this.options.bitrate,
      fec: false,
      expectedLossPercent: 0,
      complexity: this.options.complexity ?? NARROWBAND_CELT_COMPLEXITY,
      celtOnly: true,
    });
    return this.celt;
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
  const tuning = new OpusSendTuning(encoder, {
    rate,
    bitrate: sending.bitrate,
    fec: sending.fec ?? true,
    dtx: sending.dtx ?? false,
    complexity: settings.opusComplexity,
  });
  const sender = new SilenceSkippingEncoder(tuning);
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
