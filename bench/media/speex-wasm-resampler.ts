import speexResampler from 'speex-resampler';

const SpeexResampler = speexResampler.default;

/**
 * The speex-resampler package (libspeexdsp's resampler compiled to WebAssembly) with the same
 * face as voxgate's Resampler: mono Int16Array in, a new Int16Array out, state kept between
 * calls. The package works on Buffers, so the samples go in as a view and come back as one.
 */
export class SpeexWasmResampler {
  readonly #resampler: InstanceType<typeof SpeexResampler>;

  private constructor(fromRate: number, toRate: number, quality: number) {
    this.#resampler = new SpeexResampler(1, fromRate, toRate, quality);
  }

  /** The WebAssembly module compiles asynchronously, once for all instances. */
  static async create(fromRate: number, toRate: number, quality: number) {
    await SpeexResampler.initPromise;
    return new SpeexWasmResampler(fromRate, toRate, quality);
  }

  process(pcm: Int16Array): Int16Array {
    const out = this.#resampler.processChunk(
      Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength),
    );
    return new Int16Array(out.buffer, out.byteOffset, out.length >> 1);
  }
}
