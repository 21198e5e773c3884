// The part of @jitsi/rnnoise-wasm's Emscripten modules the DSP benchmark uses; the package ships
// no typings. dist/rnnoise.js is the package's main build and loads dist/rnnoise.wasm;
// dist/rnnoise-sync.js is a separate build that carries its WebAssembly inline.
declare module '@jitsi/rnnoise-wasm/dist/rnnoise.js' {
  interface RnnoiseModule {
    /** A view on the module's memory; replaced when the memory grows, so read it per use. */
    HEAPF32: Float32Array;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    /** A denoiser state; 0 selects the built-in model. */
    _rnnoise_create(model: number): number;
    _rnnoise_destroy(state: number): void;
    /** Denoises 480 floats at 48 kHz (16-bit scale) from `input` into `output`; returns the VAD probability. */
    _rnnoise_process_frame(state: number, output: number, input: number): number;
  }

  /** `wasmBinary` skips the module's own loading of rnnoise.wasm (made for browsers). */
  function createRNNWasmModule(options?: { wasmBinary?: Uint8Array }): Promise<RnnoiseModule>;

  export = createRNNWasmModule;
}

declare module '@jitsi/rnnoise-wasm/dist/rnnoise-sync.js' {
  import type createRNNWasmModule from '@jitsi/rnnoise-wasm/dist/rnnoise.js';

  type RnnoiseModule = Awaited<ReturnType<typeof createRNNWasmModule>>;

  /** Returns the module at once; `ready` resolves when its WebAssembly is instantiated. */
  function createRNNWasmModuleSync(): RnnoiseModule & { ready: Promise<unknown> };

  export = createRNNWasmModuleSync;
}
