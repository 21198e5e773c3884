import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import createRnnoiseModule from '@jitsi/rnnoise-wasm/dist/rnnoise.js';
import createInlineRnnoiseModule from '@jitsi/rnnoise-wasm/dist/rnnoise-sync.js';

type RnnoiseModule = Awaited<ReturnType<typeof createRnnoiseModule>>;

/**
 * The package's two builds: its main one (dist/rnnoise.js with dist/rnnoise.wasm) and the one
 * with the WebAssembly inline (dist/rnnoise-sync.js), which is a different and slower build.
 */
export type RnnoiseBuild = 'main' | 'inline';

/** RNNoise's fixed frame: 10 ms at 48 kHz. */
export const RNNOISE_FRAME = 480;

/**
 * RNNoise (through @jitsi/rnnoise-wasm) with the same face as voxgate's NoiseSuppressor: 16-bit
 * PCM in, a new denoised array out. RNNoise takes floats on the 16-bit scale, so each frame is
 * converted into the module's memory and back, as any caller holding PCM would have to.
 */
export class RnnoiseDenoiser {
  readonly #module: RnnoiseModule;
  readonly #state: number;
  readonly #input: number;
  readonly #output: number;

  private constructor(module: RnnoiseModule) {
    this.#module = module;
    this.#state = module._rnnoise_create(0);
    this.#input = module._malloc(RNNOISE_FRAME * 4);
    this.#output = module._malloc(RNNOISE_FRAME * 4);
  }

  static async create(build: RnnoiseBuild = 'main'): Promise<RnnoiseDenoiser> {
    if (build === 'inline') {
      const module = createInlineRnnoiseModule();
      await module.ready;
      return new RnnoiseDenoiser(module);
    }
    const wasm = createRequire(import.meta.url).resolve('@jitsi/rnnoise-wasm/dist/rnnoise.wasm');
    return new RnnoiseDenoiser(await createRnnoiseModule({ wasmBinary: readFileSync(wasm) }));
  }

  /** One 480-sample frame at 48 kHz in, the same frame denoised out. */
  process(frame: Int16Array): Int16Array {
    if (frame.length !== RNNOISE_FRAME) {
      throw new RangeError(`Expected ${RNNOISE_FRAME} samples but received ${frame.length}`);
    }
    const heap = this.#module.HEAPF32;
    const input = this.#input >> 2;
    for (let i = 0; i < RNNOISE_FRAME; i++) heap[input + i] = frame[i]!;
    this.#module._rnnoise_process_frame(this.#state, this.#output, this.#input);
    const output = this.#output >> 2;
    const out = new Int16Array(RNNOISE_FRAME);
    // Int16Array stores wrap rather than saturate, so clamp first.
    for (let i = 0; i < RNNOISE_FRAME; i++) {
      const v = Math.round(heap[output + i]!);
      out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
    return out;
  }
}
