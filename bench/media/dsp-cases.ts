import alawmulaw from 'alawmulaw';
import { muLawDecode, muLawEncode } from '../../src/media/codec/g711.js';
import { NoiseSuppressor } from '../../src/media/codec/noise-suppressor.js';
import { l16ToNetwork } from '../../src/media/codec/pcm-frame.js';
import { Resampler } from '../../src/media/codec/resampler.js';
import type { FrameWork } from './frame-timing.js';
import { RNNOISE_FRAME, RnnoiseDenoiser, type RnnoiseBuild } from './rnnoise-denoiser.js';
import { SpeexWasmResampler } from './speex-wasm-resampler.js';
import { frames, type TestAudio } from './test-audio.js';

const { mulaw } = alawmulaw;

/** Both libspeexdsp builds run at speex's VoIP quality, voxgate's default. */
export const RESAMPLER_QUALITY = 3;
/** voxgate's noise_cancellation_level for the noise suppression cases: the strongest band. */
export const NOISE_CANCELLATION_LEVEL = 100;

export type Contender =
  | 'voxgate'
  | 'alawmulaw'
  | 'speex-resampler'
  | 'rnnoise-wasm'
  | 'rnnoise-wasm-inline'
  | 'alternatives'
  | 'ffmpeg';

/** One contender doing one stage's work on consecutive 20 ms frames of the test audio. */
export interface DspCase {
  id: string;
  stage: string;
  contender: Contender;
  /** What one timed frame does. */
  detail: string;
  work: FrameWork;
}

export const RESAMPLINGS = [
  [8000, 16000],
  [16000, 8000],
  [8000, 24000],
] as const;

/** Calls `step` on the frames in order, wrapping round at the end of the clip. */
function cycle<T>(items: readonly T[], step: (item: T) => number): FrameWork {
  let i = 0;
  return () => {
    const result = step(items[i]!);
    i = i + 1 === items.length ? 0 : i + 1;
    return result;
  };
}

const halves = (frame: Int16Array): [Int16Array, Int16Array] => [
  frame.subarray(0, frame.length >> 1),
  frame.subarray(frame.length >> 1),
];

/** Every case, each with its own state (resamplers and denoisers are per stream). */
export async function makeDspCases(audio: TestAudio): Promise<DspCase[]> {
  const pcm8 = frames(audio.pcm[8000], 160);
  const pcm16 = frames(audio.pcm[16000], 320);
  const pcm48 = frames(audio.pcm[48000], 960);
  const codes = pcm8.map((f) => muLawEncode(f));
  const cases: DspCase[] = [
    g711('decode', 'voxgate', 'muLawDecode, 160 bytes to 160 samples', codes, muLawDecode),
    g711('decode', 'alawmulaw', 'mulaw.decode, 160 bytes to 160 samples', codes, mulaw.decode),
    g711('encode', 'voxgate', 'muLawEncode, 160 samples to 160 bytes', pcm8, muLawEncode),
    g711('encode', 'alawmulaw', 'mulaw.encode, 160 samples to 160 bytes', pcm8, mulaw.encode),
  ];
  for (const [from, to] of RESAMPLINGS) {
    const input = from === 8000 ? pcm8 : pcm16;
    const stage = `resample ${from / 1000}k to ${to / 1000}k`;
    const detail = `${input[0]!.length} samples in, ${(input[0]!.length * to) / from} out, streaming`;
    const ours = new Resampler(from, to, { quality: RESAMPLER_QUALITY });
    const wasm = await SpeexWasmResampler.create(from, to, RESAMPLER_QUALITY);
    cases.push(
      { id: `${stage}/voxgate`, stage, contender: 'voxgate', detail, work: resample(input, ours) },
      {
        id: `${stage}/speex-resampler`,
        stage,
        contender: 'speex-resampler',
        detail,
        work: resample(input, wasm),
      },
    );
  }
  cases.push(
    noiseSuppression(8000, pcm8),
    noiseSuppression(16000, pcm16),
    await rnnoise(pcm48, 'main'),
    await rnnoise(pcm48, 'inline'),
    inboundVoxgate(codes),
    await inboundAlternatives(codes),
  );
  return cases;
}

function g711<I, O extends { length: number }>(
  direction: 'decode' | 'encode',
  contender: Contender,
  detail: string,
  input: readonly I[],
  codec: (frame: I) => O,
): DspCase {
  const stage = `mu-law ${direction}`;
  const work = cycle(input, (frame) => codec(frame).length);
  return { id: `${stage}/${contender}`, stage, contender, detail, work };
}

function resample(
  input: readonly Int16Array[],
  resampler: { process(pcm: Int16Array): Int16Array },
): FrameWork {
  return cycle(input, (frame) => resampler.process(frame)[0]!);
}

function noiseSuppression(rate: 8000 | 16000, input: readonly Int16Array[]): DspCase {
  const suppressor = new NoiseSuppressor(rate, NOISE_CANCELLATION_LEVEL);
  const split = input.map(halves);
  const stage = `noise suppression ${rate / 1000}k`;
  return {
    id: `${stage}/voxgate`,
    stage,
    contender: 'voxgate',
    detail: `NoiseSuppressor(${rate}, ${NOISE_CANCELLATION_LEVEL}), 2 x ${rate / 100} samples`,
    work: cycle(split, ([a, b]) => suppressor.process(a)[0]! + suppressor.process(b)[0]!),
  };
}

async function rnnoise(input: readonly Int16Array[], build: RnnoiseBuild): Promise<DspCase> {
  const denoiser = await RnnoiseDenoiser.create(build);
  const split = input.map(halves);
  const contender = build === 'main' ? 'rnnoise-wasm' : 'rnnoise-wasm-inline';
  const file = build === 'main' ? 'rnnoise.wasm' : 'rnnoise-sync.js';
  return {
    id: `noise suppression 48k/${contender}`,
    stage: 'noise suppression 48k',
    contender,
    detail: `${file} rnnoise_process_frame, 2 x ${RNNOISE_FRAME} samples at 48 kHz, int16 to float and back`,
    work: cycle(split, ([a, b]) => denoiser.process(a)[0]! + denoiser.process(b)[0]!),
  };
}

/**
 * The inbound path of a call leg, as voxgate builds it: PCMU from RTP, decoded, denoised at the
 * call's 8 kHz in two 10 ms halves, resampled to 16 kHz, and put in network byte order for a
 * WebSocket fork.
 */
function inboundVoxgate(codes: readonly Buffer[]): DspCase {
  const suppressor = new NoiseSuppressor(8000, NOISE_CANCELLATION_LEVEL);
  const resampler = new Resampler(8000, 16000, { quality: RESAMPLER_QUALITY });
  const denoised = new Int16Array(160);
  return {
    id: 'inbound path/voxgate',
    stage: 'inbound path',
    contender: 'voxgate',
    detail: 'muLawDecode, NoiseSuppressor 8 kHz x 2, Resampler 8k to 16k, l16ToNetwork',
    work: cycle(codes, (frame) => {
      const pcm = muLawDecode(frame);
      denoised.set(suppressor.process(pcm.subarray(0, 80)), 0);
      denoised.set(suppressor.process(pcm.subarray(80)), 80);
      const payload = l16ToNetwork(resampler.process(denoised));
      return payload.length + payload[1]!;
    }),
  };
}

/** The same path from the npm alternatives: RNNoise needs 48 kHz, so the audio goes via 48k. */
async function inboundAlternatives(codes: readonly Buffer[]): Promise<DspCase> {
  const denoiser = await RnnoiseDenoiser.create();
  const up = await SpeexWasmResampler.create(8000, 48000, RESAMPLER_QUALITY);
  const down = await SpeexWasmResampler.create(48000, 16000, RESAMPLER_QUALITY);
  const denoised = new Int16Array(2 * RNNOISE_FRAME);
  return {
    id: 'inbound path/alternatives',
    stage: 'inbound path',
    contender: 'alternatives',
    detail:
      'alawmulaw mulaw.decode, speex-resampler 8k to 48k, RNNoise x 2, speex-resampler 48k to ' +
      '16k, Buffer swap16',
    work: cycle(codes, (frame) => {
      const pcm48 = up.process(mulaw.decode(frame));
      denoised.set(denoiser.process(pcm48.subarray(0, RNNOISE_FRAME)), 0);
      denoised.set(denoiser.process(pcm48.subarray(RNNOISE_FRAME)), RNNOISE_FRAME);
      const pcm16 = down.process(denoised);
      const payload = Buffer.from(pcm16.buffer, pcm16.byteOffset, pcm16.byteLength).swap16();
      return payload.length + payload[1]!;
    }),
  };
}

/** Whether the two G.711 codecs agree: every code decoded, and every sample of the clip encoded. */
export function g711Agreement(audio: TestAudio) {
  const allCodes = Uint8Array.from({ length: 256 }, (_, i) => i);
  const ours = muLawDecode(allCodes);
  const theirs = mulaw.decode(allCodes);
  const decodeDiffering = ours.filter((v, i) => v !== theirs[i]).length;
  const pcm = audio.pcm[8000];
  const encodedOurs = muLawEncode(pcm);
  const encodedTheirs = mulaw.encode(pcm);
  const encodeDiffering = encodedOurs.filter((v, i) => v !== encodedTheirs[i]).length;
  return {
    decodeCodesDiffering: decodeDiffering,
    decodeCodes: 256,
    encodeSamplesDiffering: encodeDiffering,
    encodeSamples: pcm.length,
  };
}
