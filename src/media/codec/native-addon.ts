import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The C++ addon's surface (native/src). It checks nothing: callers pass valid arguments. */
export interface NativeAddon {
  /** Sets SO_SNDBUF on a socket's descriptor; returns the size the kernel took. */
  setSendBuffer(fd: number, bytes: number): number;
  /** Puts one thread (a Linux thread id) under SCHED_RR; throws with `errno` when refused. */
  setRoundRobin(tid: number, priority: number): void;
  muLawEncode(pcm: Int16Array): Buffer;
  muLawDecode(codes: Uint8Array): Int16Array;
  aLawEncode(pcm: Int16Array): Buffer;
  aLawDecode(codes: Uint8Array): Int16Array;
  l16FromNetwork(bytes: Uint8Array): Int16Array;
  l16ToNetwork(pcm: Int16Array): Buffer;
  mix(frames: Int16Array[]): Int16Array;
  gain(pcm: Int16Array, factor: number): Int16Array;
  energyDbfs(pcm: Int16Array): number;
  Resampler: new (fromRate: number, toRate: number, quality: number) => NativeResampler;
  /**
   * Reads many UDP sockets: `onBatch` gets, once per wake-up, the bytes of every datagram read
   * and per datagram five numbers (the id given to add, offset, length, source port, IPv4
   * source as an unsigned number).
   */
  DatagramReader: new (
    onBatch: (bytes: Buffer, meta: Int32Array, count: number) => void,
  ) => NativeDatagramReader;
  NoiseSuppressor: new (rate: number, level: number) => NativeNoiseSuppressor;
  OpusEncoder: new (
    rate: number,
    bitrate: number,
    fec: boolean,
    lossPercent: number,
    dtx: boolean,
    complexity: number,
  ) => NativeOpusEncoder;
  OpusDecoder: new (rate: number) => NativeOpusDecoder;
  /** Samples a packet holds at `rate`, or libopus's negative error code. */
  opusPacketSamples(packet: Uint8Array, rate: number): number;
  /** libopus's text for an error code. */
  opusErrorText(code: number): string;
}

export interface NativeOpusEncoder {
  /** One frame (2.5 to 60 ms) in, one packet out; throws on a libopus failure. */
  encode(pcm: Int16Array): Buffer;
  setBitrate(bitsPerSecond: number): void;
  setPacketLoss(percent: number): void;
}

export interface NativeOpusDecoder {
  /**
   * A packet's audio, or with `fec` the FEC copy it carries of the packet before it, or with
   * a null packet `samples` of concealment; a negative number is libopus's error code.
   */
  decode(packet: Uint8Array | null, samples: number, fec: boolean): Int16Array | number;
}

export interface NativeDatagramReader {
  /** Starts reading an IPv4 socket's descriptor, its datagrams tagged with `id`. */
  add(fd: number, id: number): void;
  /** Stops reading a descriptor (before it is closed). */
  remove(fd: number): void;
  /** Stops reading everything. */
  close(): void;
}

export interface NativeResampler {
  process(pcm: Int16Array): Int16Array;
  inputLatency(): number;
}

export interface NativeNoiseSuppressor {
  process(frame: Int16Array): Int16Array;
}

// This module runs from src/media/codec (tsx) and from dist/src/media/codec (after tsc); the
// addon is built once into native/build at the repository root.
const ADDON_CANDIDATES = [
  '../../../native/build/Release/voxgate_native.node',
  '../../../../native/build/Release/voxgate_native.node',
];

function loadAddon(): NativeAddon {
  const paths = ADDON_CANDIDATES.map((p) => fileURLToPath(new URL(p, import.meta.url)));
  const found = paths.find((p) => existsSync(p));
  if (found === undefined) {
    throw new Error(
      `The native addon is not built (looked for ${paths.join(' and ')}); run npm run build:native`,
    );
  }
  return createRequire(import.meta.url)(found) as NativeAddon;
}

export const addon: NativeAddon = loadAddon();
