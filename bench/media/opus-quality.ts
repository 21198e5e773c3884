import { muLawDecode, muLawEncode } from '../../src/media/codec/g711.js';
import { OpusDecoder, OpusEncoder } from '../../src/media/codec/opus.js';
import { Resampler } from '../../src/media/codec/resampler.js';
import { sineSnrDb, tone } from '../../test/support/signal.js';
import { frames } from './test-audio.js';

/**
 * How the Opus a leg sends sounds, by measures that need no listener, at each complexity: the
 * SNR of a 1 kHz tone after encoding and decoding (the least-squares sine is the signal), the
 * waveform SNR of the clip's speech at its best delay (a waveform measure, not a perceptual
 * one: libopus's noise shaping lowers it on purpose), and the speech's spectral distortion on
 * the ear's critical bands (see barkDistortionDb), which noise shaping does not fool as much
 * (it is what perceptual scores build on, though it is not one). "narrowband": audio as a bot
 * sends it at 8 kHz (through mu-law and the 8 to 16 kHz resampler), coded narrowband as a leg
 * codes it; "wideband": the 16 kHz clip, coded wideband. No FEC planned, 24 kbit/s. "voip" is
 * libopus's VoIP application (SILK for speech at this bitrate), "celt only" its restricted
 * low-delay one.
 */
export interface OpusQuality {
  coding: 'voip' | 'celt only';
  complexity: number;
  band: 'narrowband' | 'wideband';
  toneSnrDb: number;
  speechWaveformSnrDb: number;
  /** Lower is closer to the input; 0 is the input itself. */
  speechBarkDistortionDb: number;
}

const BITRATE = 24000;
/** The delays tried for the speech, in samples at 16 kHz (the codec's is a few ms). */
const MAX_DELAY = 400;

function throughOpus(
  pcm16k: Int16Array,
  complexity: number,
  narrow: boolean,
  celtOnly = false,
): Int16Array {
  const encoder = new OpusEncoder(16000, {
    bitrate: BITRATE,
    expectedLossPercent: 0,
    complexity,
    celtOnly,
  });
  if (narrow) encoder.setAudioBand(4000, true);
  const decoder = new OpusDecoder(16000);
  const out = new Int16Array(pcm16k.length);
  let at = 0;
  for (const frame of frames(pcm16k, 320)) {
    out.set(decoder.decode(encoder.encode(frame)), at);
    at += frame.length;
  }
  return out;
}

/** As a bot's 8 kHz mu-law audio reaches a 16 kHz leg. */
function asBotAudio(pcm8k: Int16Array): Int16Array {
  return new Resampler(8000, 16000).process(muLawDecode(muLawEncode(pcm8k)));
}

/** The waveform SNR at the delay that gives the best, and that delay in samples. */
function waveformSnr(reference: Int16Array, decoded: Int16Array): { snrDb: number; delay: number } {
  let best = { snrDb: -Infinity, delay: 0 };
  for (let delay = 0; delay < MAX_DELAY; delay++) {
    let signal = 0;
    let noise = 0;
    for (let i = 0; i + delay < decoded.length; i++) {
      const x = reference[i]!;
      signal += x * x;
      noise += (x - decoded[i + delay]!) ** 2;
    }
    const snrDb = 10 * Math.log10(signal / noise);
    if (snrDb > best.snrDb) best = { snrDb, delay };
  }
  return best;
}

/** Upper edges of the critical bands (Zwicker's Bark scale) up to 8 kHz, in Hz. */
const BARK_EDGES = [
  100, 200, 300, 400, 510, 630, 770, 920, 1080, 1270, 1480, 1720, 2000, 2320, 2700, 3150, 3700,
  4400, 5300, 6400, 7700,
];
/** 20 ms at 16 kHz, advanced by half. */
const FRAME = 320;
/** Frames this far (dB) below the loudest one are pauses, left out. */
const ACTIVE_WITHIN_DB = 40;

const HANN = Float64Array.from(
  { length: FRAME },
  (_, n) => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / FRAME),
);
/** cos and sin of bin k at sample n, at [k * FRAME + n]: one plain DFT per frame (a bench). */
const COS = Float64Array.from({ length: (FRAME / 2) * FRAME }, (_, i) =>
  Math.cos((2 * Math.PI * Math.floor(i / FRAME) * (i % FRAME)) / FRAME),
);
const SIN = Float64Array.from({ length: (FRAME / 2) * FRAME }, (_, i) =>
  Math.sin((2 * Math.PI * Math.floor(i / FRAME) * (i % FRAME)) / FRAME),
);

/** Each critical band's energy in one Hann-windowed frame, in dB. */
function barkBandsDb(pcm: Int16Array, start: number, maxHz: number): number[] {
  const windowed = Float64Array.from(HANN, (w, n) => w * pcm[start + n]!);
  const bands: number[] = [];
  let band = 0;
  let energy = 0;
  for (let k = 1; k < FRAME / 2; k++) {
    const hz = (k * 16000) / FRAME;
    if (hz > maxHz) break;
    if (hz > BARK_EDGES[band]!) {
      bands.push(10 * Math.log10(energy + 1));
      energy = 0;
      band++;
    }
    let re = 0;
    let im = 0;
    for (let n = 0, at = k * FRAME; n < FRAME; n++, at++) {
      re += windowed[n]! * COS[at]!;
      im -= windowed[n]! * SIN[at]!;
    }
    energy += re * re + im * im;
  }
  bands.push(10 * Math.log10(energy + 1));
  return bands;
}

/**
 * The speech's mean distance between input and output on the critical bands up to `maxHz`:
 * per 20 ms frame (speech frames only), the root mean square of the bands' level differences in
 * dB, averaged over the frames. A log spectral distance on the Bark scale, as in Bark spectral
 * distortion (Wang, Sekey and Gersho, 1992), without the loudness model.
 */
function barkDistortionDb(
  reference: Int16Array,
  decoded: Int16Array,
  delay: number,
  maxHz: number,
): number {
  const frames: { level: number; distance: number }[] = [];
  for (let start = 0; start + delay + FRAME <= decoded.length; start += FRAME / 2) {
    const x = barkBandsDb(reference, start, maxHz);
    const y = barkBandsDb(decoded, start + delay, maxHz);
    const level = 10 * Math.log10(x.reduce((sum, db) => sum + 10 ** (db / 10), 0));
    const squares = x.reduce((sum, db, i) => sum + (db - y[i]!) ** 2, 0);
    frames.push({ level, distance: Math.sqrt(squares / x.length) });
  }
  const loudest = Math.max(...frames.map((f) => f.level));
  const active = frames.filter((f) => f.level > loudest - ACTIVE_WITHIN_DB);
  return active.reduce((sum, f) => sum + f.distance, 0) / active.length;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

export function opusQuality(speech: { 8000: Int16Array; 16000: Int16Array }): OpusQuality[] {
  const inputs = {
    narrowband: { tone: asBotAudio(tone(8000, 1000, 2, 8000)), speech: asBotAudio(speech[8000]) },
    wideband: { tone: tone(16000, 1000, 2, 8000), speech: speech[16000] },
  };
  const codings = [
    { coding: 'voip', complexities: [0, 1, 2, 3, 4, 5, 10] },
    { coding: 'celt only', complexities: [0, 1, 5, 10] },
  ] as const;
  return codings.flatMap(({ coding, complexities }) =>
    complexities.flatMap((complexity) => bandsAt(inputs, coding, complexity)),
  );
}

function bandsAt(
  inputs: Record<'narrowband' | 'wideband', { tone: Int16Array; speech: Int16Array }>,
  coding: OpusQuality['coding'],
  complexity: number,
): OpusQuality[] {
  const celtOnly = coding === 'celt only';
  return (['narrowband', 'wideband'] as const).map((band) => {
    const narrow = band === 'narrowband';
    const { tone: toneIn, speech: speechIn } = inputs[band];
    // The tone's first and last 200 ms are left out: the codec starting and the resampler.
    const toneOut = throughOpus(toneIn, complexity, narrow, celtOnly).subarray(
      3200,
      toneIn.length - 3200,
    );
    const speechOut = throughOpus(speechIn, complexity, narrow, celtOnly);
    const waveform = waveformSnr(speechIn, speechOut);
    return {
      coding,
      complexity,
      band,
      toneSnrDb: round1(sineSnrDb(toneOut, 16000, 1000)),
      speechWaveformSnrDb: round1(waveform.snrDb),
      speechBarkDistortionDb: round1(
        barkDistortionDb(speechIn, speechOut, waveform.delay, narrow ? 3700 : 7700),
      ),
    };
  });
}
