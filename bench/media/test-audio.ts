import { execFileSync } from 'node:child_process';

/** Rates the benchmark needs the test audio at: the call (8k), wideband (16k) and RNNoise's 48k. */
export type AudioRate = 8000 | 16000 | 48000;

export interface TestAudio {
  /** What the clip says, and the noise mixed into it. */
  description: string;
  seconds: number;
  /** The same noisy speech at each rate, as host-order 16-bit PCM. */
  pcm: Record<AudioRate, Int16Array>;
}

const SCRIPT =
  'Thank you for calling. Please say the name of the person or department you want to reach, ' +
  'or press one for sales, two for support, and zero for the operator. ' +
  'Your call may be recorded for quality and training purposes.';
/** Peak of the pseudo-random noise, about -36 dBFS: a quiet office under the voice. */
const NOISE_PEAK = 500;

/**
 * Speech from espeak-ng, converted to each rate by ffmpeg, with pseudo-random white noise (a
 * fixed-seed generator, so every run hears the same clip) added at each rate and saturated.
 * Generated at run time so no audio file is committed.
 */
export function makeTestAudio(): TestAudio {
  const wav = execFileSync('espeak-ng', ['--stdout', SCRIPT], { maxBuffer: 64 << 20 });
  const pcm = {
    8000: withNoise(convert(wav, 8000)),
    16000: withNoise(convert(wav, 16000)),
    48000: withNoise(convert(wav, 48000)),
  };
  return {
    description: `espeak-ng reading ${SCRIPT.split(' ').length} words, plus white noise peaking at ±${NOISE_PEAK}`,
    seconds: Math.round((pcm[8000].length / 8000) * 100) / 100,
    pcm,
  };
}

function convert(wav: Buffer, rate: AudioRate): Int16Array {
  const raw = execFileSync(
    'ffmpeg',
    ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0'].concat([
      '-f',
      's16le',
      '-ac',
      '1',
      '-ar',
      String(rate),
      'pipe:1',
    ]),
    { input: wav, maxBuffer: 64 << 20 },
  );
  const samples = new Int16Array(raw.length >> 1);
  for (let i = 0; i < samples.length; i++) samples[i] = raw.readInt16LE(i * 2);
  return samples;
}

function withNoise(speech: Int16Array): Int16Array {
  let seed = 0x2545f491;
  const out = new Int16Array(speech.length);
  for (let i = 0; i < speech.length; i++) {
    // xorshift32: cheap, deterministic, and good enough to sound like hiss.
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    const noise = Math.round(((seed >>> 0) / 2 ** 32 - 0.5) * 2 * NOISE_PEAK);
    out[i] = Math.max(-32768, Math.min(32767, speech[i]! + noise));
  }
  return out;
}

/** Consecutive frames of `samples` each; a short tail is dropped. */
export function frames<T extends Int16Array | Uint8Array>(audio: T, samples: number): T[] {
  const out: T[] = [];
  for (let at = 0; at + samples <= audio.length; at += samples) {
    out.push(audio.slice(at, at + samples) as T);
  }
  return out;
}
