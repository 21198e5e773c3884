import { muLawDecode, muLawEncode } from '../../src/media/codec/g711.js';
import { OpusDecoder, OpusEncoder } from '../../src/media/codec/opus.js';
import { Resampler } from '../../src/media/codec/resampler.js';
import { sineSnrDb, tone } from '../../test/support/signal.js';
import { frames } from './test-audio.js';

/**
 * How the Opus a leg sends sounds, by measures that need no listener, at each complexity: the
 * SNR of a 1 kHz tone after encoding and decoding (the least-squares sine is the signal), and
 * the waveform SNR of the clip's speech at its best delay (a waveform measure, not a
 * perceptual one: libopus's noise shaping lowers it on purpose). "narrowband": audio as a bot
 * sends it at 8 kHz (through mu-law and the 8 to 16 kHz resampler), coded narrowband as a leg
 * codes it; "wideband": the 16 kHz clip, coded wideband. No FEC planned, 24 kbit/s.
 */
export interface OpusQuality {
  complexity: number;
  band: 'narrowband' | 'wideband';
  toneSnrDb: number;
  speechWaveformSnrDb: number;
}

const BITRATE = 24000;
/** The delays tried for the speech, in samples at 16 kHz (the codec's is a few ms). */
const MAX_DELAY = 400;

function throughOpus(pcm16k: Int16Array, complexity: number, narrow: boolean): Int16Array {
  const encoder = new OpusEncoder(16000, { bitrate: BITRATE, expectedLossPercent: 0, complexity });
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

function waveformSnrDb(reference: Int16Array, decoded: Int16Array): number {
  let best = -Infinity;
  for (let delay = 0; delay < MAX_DELAY; delay++) {
    let signal = 0;
    let noise = 0;
    for (let i = 0; i + delay < decoded.length; i++) {
      const x = reference[i]!;
      signal += x * x;
      noise += (x - decoded[i + delay]!) ** 2;
    }
    best = Math.max(best, 10 * Math.log10(signal / noise));
  }
  return best;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

export function opusQuality(speech: { 8000: Int16Array; 16000: Int16Array }): OpusQuality[] {
  const inputs = {
    narrowband: { tone: asBotAudio(tone(8000, 1000, 2, 8000)), speech: asBotAudio(speech[8000]) },
    wideband: { tone: tone(16000, 1000, 2, 8000), speech: speech[16000] },
  };
  return [0, 3, 5].flatMap((complexity) =>
    (['narrowband', 'wideband'] as const).map((band) => {
      const narrow = band === 'narrowband';
      const { tone: toneIn, speech: speechIn } = inputs[band];
      // The tone's first and last 200 ms are left out: the codec starting and the resampler.
      const toneOut = throughOpus(toneIn, complexity, narrow).subarray(3200, toneIn.length - 3200);
      return {
        complexity,
        band,
        toneSnrDb: round1(sineSnrDb(toneOut, 16000, 1000)),
        speechWaveformSnrDb: round1(
          waveformSnrDb(speechIn, throughOpus(speechIn, complexity, narrow)),
        ),
      };
    }),
  );
}
